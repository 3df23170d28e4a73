"""`desklens history` says on the terminal what happened to a damaged history (moved aside,
rows recovered, where the damaged file is kept), and shows chat titles without running them."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from desktop.core.history import HistoryStore

ROOT = Path(__file__).resolve().parents[2]


def desklens(*args: str, data: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DESKLENS_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "desktop", *args], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)  # fmt: skip


def test_a_damaged_history_is_said_on_the_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "history.sqlite3").write_bytes(b"this is not SQLite at all\n" * 100)
    run = desklens("history", "list", data=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "desklens: The chat history" in run.stderr and "damaged" in run.stderr
    assert "history.sqlite3.corrupt-" in run.stderr  # where the damaged file is kept
    again = desklens("history", "list", data=tmp_path)
    assert "damaged" not in again.stderr  # said once, when it happened


def test_a_damaged_history_with_chats_says_how_many_were_recovered(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    with HistoryStore(folder) as store:
        for number in range(3):
            store.create_conversation(f"chat {number}")
    database = folder / "history.sqlite3"
    with sqlite3.connect(database) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(database.read_bytes())
    data[:16] = b"not a database!!"  # the header: the file no longer opens
    database.write_bytes(bytes(data))
    run = desklens("history", "list", data=tmp_path)
    assert run.returncode == 0 and "recovered" in run.stderr, run.stderr


def test_a_chat_title_with_control_characters_is_shown_not_run(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history") as store:
        store.create_conversation("bill\x1b]0;pwned\x07\u202efdp.exe\nsecond line")
    run = desklens("history", "list", data=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout and "\u202e" not in run.stdout
    assert r"bill\x1b]0;pwned\x07\u202efdp.exe" in run.stdout  # (the store folds the line)


def _chat_with_a_picture(data: Path) -> None:
    from PIL import Image

    from desktop.core.images import load_image

    with HistoryStore(data / "history") as store:
        chat = store.create_conversation("Invoice")
        picture = load_image(Image.new("RGB", (64, 32), "white"), name="a.png")
        store.add_message(chat, "user", "What is it?", images=[picture])
        store.add_message(chat, "assistant", "An invoice.")


def test_an_export_that_cannot_be_written_says_so_once_and_exits_4(tmp_path: Path) -> None:
    _chat_with_a_picture(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    run = desklens("history", "export", "--last", "--out", str(blocker / "x.md"), data=tmp_path)
    assert run.returncode == 4, run.stderr
    assert run.stderr.count("Could not write") == 1, run.stderr
    assert "Traceback" not in run.stderr


def test_an_export_of_a_chat_whose_picture_row_is_damaged_keeps_the_rest(tmp_path: Path) -> None:
    _chat_with_a_picture(tmp_path)
    with sqlite3.connect(tmp_path / "history" / "history.sqlite3") as database:
        database.execute("UPDATE message_images SET digest = '../../etc/passwd'")
    out = tmp_path / "chat.md"
    run = desklens("history", "export", "--last", "--out", str(out), data=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    text = out.read_text(encoding="utf-8")
    assert "What is it?" in text and "An invoice." in text
    assert not (tmp_path / "chat images").exists()  # nothing read from outside the store
