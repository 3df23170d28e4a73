"""Hostile and unlucky inputs to the core: writes that fail half-way, JSON too deep or too
large in each file the app reads, manifests that point outside their folder, odd files, a
damaged or read-only history. Each asserts a sentence (no traceback), and nothing lost or
half-written."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from other_user import as_other_user, shared_folder

from desktop.cli import main
from desktop.core import atomic, bounded_json
from desktop.core.history import HistoryError, HistoryStore
from desktop.core.history.records import DATABASE_NAME
from desktop.core.images import ImageError, file_problem, load_image
from desktop.core.manifest import MANIFEST_NAME, ModelError, read_manifest
from desktop.core.model_registry import find_models
from desktop.core.ocr import model_files

ROOT = Path(__file__).resolve().parents[2]


# --- atomic writes ---------------------------------------------------------------------------


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    target = tmp_path / "result.json"
    target.write_text("old, complete")

    def disk_full(*args: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    if failing == "write":
        with pytest.raises(atomic.WriteError) as caught, atomic.atomic_file(target) as file:
            file.write("new, half")
            file.flush()
            disk_full()
    else:
        monkeypatch.setattr(atomic.os, failing, disk_full)
        with pytest.raises(atomic.WriteError) as caught:
            atomic.write_text(target, "new")
    assert str(caught.value) == f"Could not write {target}: No space left on device."
    assert caught.value.disk_full and caught.value.affects_folder
    assert target.read_text() == "old, complete"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_written_files_get_the_usual_or_a_private_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    plain = atomic.write_text(tmp_path / "plain.txt", "x")
    secret = atomic.write_bytes(tmp_path / "key", b"k", private=True)
    assert plain.stat().st_mode & 0o777 == 0o666 & ~umask
    assert secret.stat().st_mode & 0o777 == 0o600


def test_a_real_full_disk_is_a_sentence_and_leaves_nothing(tmp_path: Path) -> None:
    """A 64 kB tmpfs (mounting one needs root, as in CI; ENOSPC is injected above)."""
    small = tmp_path / "small"
    small.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        atomic.write_text(small / "fits.txt", "a" * 1000)
        with pytest.raises(atomic.WriteError, match="No space left on device") as caught:
            atomic.write_text(small / "big.txt", "b" * (1 << 20))
        assert caught.value.disk_full
        assert sorted(p.name for p in small.iterdir()) == ["fits.txt"]
        assert (small / "fits.txt").read_text() == "a" * 1000
    finally:
        subprocess.run(["umount", str(small)], check=True)


# --- bounded JSON ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 200_000, "nested 200000 levels deep; the limit is 64"),
        ('{"a": ' * 65 + "1" + "}" * 65, "nested 65 levels deep"),
        ("[" * 70 + "]" * 70, "nested 70 levels deep"),
        ('"' + "x" * (17 << 20) + '"', "is too large to read (17.8 MB; the limit is 16.8 MB)"),
        ('{"a": [1, 2', "is not valid JSON"),
    ],
)
def test_json_beyond_its_bounds_is_one_sentence(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(bounded_json.JsonError, match=re.escape(message)):
        bounded_json.read_json(path)


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    text = json.dumps({"text": "[" * 1000 + '\\"{' * 500, "list": [[["ok"]]]})
    assert bounded_json.loads(text)["list"] == [[["ok"]]]
    assert bounded_json.nesting_depth(text) == 4


def test_a_json_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(bounded_json.JsonError, match="is not a regular file"):
        bounded_json.read_json(tmp_path / "fifo.json")  # would otherwise block forever


def test_a_sparse_200_mb_config_is_refused_from_its_size(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    with path.open("wb") as file:
        file.truncate(200 << 20)  # no disk used; read_json must not read it
    with pytest.raises(bounded_json.JsonError, match="209.7 MB; the limit is"):
        bounded_json.read_json(path)


# --- model folders ---------------------------------------------------------------------------


def _model_folder(base: Path, name: str, files: dict) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    manifest = {
        "format": 1, "source": "test", "model_type": "qwen3_vl", "weight_format": "int8",
        "created": "2026-01-01T00:00:00+00:00", "versions": {}, "files": files,
    }  # fmt: skip
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    return folder


@pytest.mark.parametrize(
    "name",
    [
        "../../../../etc/shadow",
        "/etc/shadow",
        "sub/../../outside",
        "..",
        "C:/Windows/x",
        "a\\..\\b",
    ],
)
def test_a_manifest_cannot_name_a_file_outside_its_folder(tmp_path: Path, name: str) -> None:
    folder = _model_folder(tmp_path, "evil", {name: {"size": 1, "sha256": "0" * 64}})
    with pytest.raises(ModelError) as caught:
        read_manifest(folder)
    assert "outside the model folder" in str(caught.value) or "plain relative" in str(caught.value)
    assert "bytes instead of" not in str(caught.value)  # nothing about the file is revealed


def test_a_symlink_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "secret.bin"
    outside.write_bytes(b"s" * 1234)
    folder = _model_folder(tmp_path, "linked", {"weights.bin": {"size": 1, "sha256": "0" * 64}})
    (folder / "weights.bin").symlink_to(outside)
    for name in ("config.json", "preprocessor_config.json"):
        (folder / name).write_text("{}")
    from desktop.core import manifest

    with pytest.raises(ModelError, match="links outside the model folder") as caught:
        manifest._check_entry(folder, "weights.bin", manifest.FileEntry(1, "0" * 64), False)
    assert "1234" not in str(caught.value)


def test_one_broken_model_folder_does_not_hide_the_others(tmp_path: Path) -> None:
    good = _model_folder(tmp_path, "a-good", {})
    deep = tmp_path / "b-deep"
    deep.mkdir()
    (deep / MANIFEST_NAME).write_text("[" * 100_000)
    huge = tmp_path / "c-huge"
    huge.mkdir()
    with (huge / MANIFEST_NAME).open("wb") as file:
        file.truncate(100 << 20)
    (tmp_path / "d-list").mkdir()
    (tmp_path / "d-list" / MANIFEST_NAME).write_text("[1, 2]")
    entries = {entry.name: entry for entry in find_models([tmp_path])}
    assert entries["a-good"].problem is None and entries["a-good"].folder == good
    assert "nested 100000 levels deep" in entries["b-deep"].problem
    assert "too large to read" in entries["c-huge"].problem
    assert "is damaged (not a JSON object)" in entries["d-list"].problem


def test_desklens_models_lists_a_folder_it_may_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """As another user: a model folder without read permission is listed with its reason."""
    with shared_folder() as open_tmp:
        _list_as_other_user(open_tmp, monkeypatch)


def _list_as_other_user(open_tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _model_folder(open_tmp, "mine", {})
    locked = _model_folder(open_tmp, "locked", {})
    locked.chmod(0o000)
    monkeypatch.setenv("DESKLENS_MODELS_DIR", str(open_tmp))

    def listing() -> tuple[int, str]:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = main(["models"])
        return code, printed.getvalue()

    code, printed = as_other_user(listing)
    assert code == 0
    assert "mine\n" in printed and "locked" in printed and "Permission denied" in printed


def test_a_deep_ocr_model_manifest_is_ignored_and_rebuilt(tmp_path: Path) -> None:
    folder = tmp_path / "ocr-int8"
    folder.mkdir()
    (folder / model_files.MANIFEST_NAME).write_text('{"files": ' * 50_000)
    assert model_files._current_int8(folder) is None  # built again, never a RecursionError
    (folder / model_files.MANIFEST_NAME).write_text(
        json.dumps({"source_sizes": model_files.source_signature(),
                    "decisions_sha256": model_files.decisions_digest(),
                    "files": {"det": "../../det.xml", "rec": "rec.xml"}})
    )  # fmt: skip
    assert model_files._current_int8(folder) is None


# --- odd input files -------------------------------------------------------------------------


def test_odd_files_are_named_in_one_sentence(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.png")
    (tmp_path / "empty.png").write_bytes(b"")
    cases = {
        tmp_path / "pipe.png": '"pipe.png" is a named pipe (FIFO), not an image.',
        Path("/dev/null"): '"null" is a device, not an image.',
        tmp_path / ("n" * 300 + ".png"): "could not be read: its name is too long.",
        tmp_path / "empty.png": '"empty.png" is empty (0 bytes), so it is not an image.',
        tmp_path / "gone" / "x.png": '"x.png" was not found.',
    }
    for path, sentence in cases.items():
        assert (file_problem(path) or "").endswith(sentence)
        with pytest.raises(ImageError) as caught:
            load_image(path)
        assert str(caught.value).endswith(sentence)


# --- history ---------------------------------------------------------------------------------


def _history_with_chats(folder: Path, chats: int = 30) -> None:
    with HistoryStore(folder) as store:
        for n in range(chats):
            conversation = store.create_conversation(f"chat {n}")
            for m in range(3):
                role = "user" if m % 2 == 0 else "assistant"
                message = store.add_message(
                    conversation, role, f"{n}.{m} " + "x" * 1500, stats={"n": n}
                )
                if role == "assistant":
                    store.set_evidence(message.id, json.dumps({"chat": n}))


def _damage_page(database: Path, table: str) -> None:
    with sqlite3.connect(database) as connection:
        query = "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'"
        pages = [row[0] for row in connection.execute(query, (table,))]
    data = bytearray(database.read_bytes())
    page = pages[len(pages) // 2]
    data[(page - 1) * 4096 : page * 4096] = b"\xa5" * 4096
    database.write_bytes(bytes(data))


def test_chats_are_recovered_from_a_damaged_history(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    _history_with_chats(folder)
    _damage_page(folder / DATABASE_NAME, "messages")
    original = (folder / DATABASE_NAME).read_bytes()
    with HistoryStore(folder) as store:
        assert store.recovered_from is not None
        assert store.recovered_from.read_bytes() == original  # kept as it was, for tools
        assert "recovered 30 chats" in store.notice and str(store.recovered_from) in store.notice
        chats = store.list_conversations()
        messages = [m for chat in chats for m in store.messages(chat.id)]
    assert len(chats) == 30
    assert 80 <= len(messages) < 90  # one damaged page of ~3 messages is lost, no more
    assert all(message.stats == {"n": int(message.text.split(".")[0])} for message in messages)
    # A grounded answer's evidence is recovered with its message (shown again when reopened).
    with HistoryStore(folder) as store:
        evidence = {
            json.loads(value)["chat"]
            for chat in chats
            for value in store.evidence_of(chat.id).values()
        }
    answered = {int(m.text.split(".")[0]) for m in messages if m.role == "assistant"}
    assert evidence == answered and len(answered) >= 25


def test_a_history_with_nothing_readable_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    _history_with_chats(folder, chats=3)
    _damage_page(folder / DATABASE_NAME, "conversations")
    with HistoryStore(folder) as store:
        assert "no chats could be recovered" in store.notice
        assert str(store.recovered_from) in store.notice
        assert store.list_conversations() == []


def test_damaged_stored_json_drops_the_value_not_the_chat(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    _history_with_chats(folder, chats=1)
    with sqlite3.connect(folder / DATABASE_NAME) as connection:
        connection.execute("UPDATE messages SET stats = ?, answer_ids = ?", ("[" * 100_000, "{"))
    with HistoryStore(folder) as store:
        messages = store.messages(store.list_conversations()[0].id)
    assert [(m.stats, m.answer_ids) for m in messages] == [(None, None)] * 3


def test_a_read_only_history_folder_says_so_and_what_to_do() -> None:
    """As another user (root writes anyway), the folder and file not writable for them."""
    with shared_folder() as open_tmp:
        message = _open_read_only_history(open_tmp / "history")
    assert "the folder is read-only" in message and "--data-dir" in message


def _open_read_only_history(folder: Path) -> str:
    _history_with_chats(folder, chats=1)
    (folder / DATABASE_NAME).chmod(0o444)
    folder.chmod(0o555)

    def opening() -> str:
        try:
            HistoryStore(folder).close()
        except HistoryError as exc:
            return str(exc)
        return "opened"

    return as_other_user(opening)


def test_history_error_for_an_uncreatable_folder_names_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(HistoryError, match=str(blocker)):
        HistoryStore(blocker / "history")
