"""The history's schema migration: histories written by DeskLens before schema 3 (made by that
code and kept in tests/core/data/history-v1 and history-v2; make_history_v2.py made the second
with the code of schema 2) open, are brought up to date in place, and read as schema 3 stores
them: the typed words as the question's text, the composed prompt apart, what was put before it
as columns, an extraction's Markdown and JSON in their own columns."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from desktop.core.chat import GenerationSettings
from desktop.core.history import AskedWith, ErrorKind, Finish, HistoryStore, Role
from desktop.core.history.database import SCHEMA_VERSION
from desktop.core.history.export import conversation_markdown
from desktop.core.history.ocr_text import OcrText
from desktop.core.images import load_image

DATA = Path(__file__).parent / "data"


def copied(version: int, tmp_path: Path) -> Path:
    folder = tmp_path / f"history-v{version}"
    shutil.copytree(DATA / f"history-v{version}", folder)
    return folder


@pytest.fixture
def old_history(tmp_path) -> Path:
    return copied(1, tmp_path)


def user_version(folder: Path) -> int:
    with sqlite3.connect(folder / "history.sqlite3") as connection:
        return connection.execute("PRAGMA user_version").fetchone()[0]


def test_a_version_1_history_is_migrated_and_reads_as_before(old_history):
    assert user_version(old_history) == 1
    with HistoryStore(old_history) as store:
        chats = {c.title: c.id for c in store.list_conversations()}
        assert set(chats) == {"Receipt total", "Plain question", "Extracted"}
        receipt = store.messages(chats["Receipt total"])
        assert [m.role for m in receipt] == [Role.USER, Role.ASSISTANT, Role.NOTE]
        question, answer, _note = receipt
        assert question.text == "What is the total?"  # the typed words, read out once
        assert question.prompt == "Answer briefly.\n\nTotal 12.50\n\nQuestion: What is the total?"
        assert question.model_text == question.prompt  # what a reopened chat replays
        assert question.asked == AskedWith(system=True)  # its settings were never stored
        assert store.load_image(question.images[0]).size == (64, 40)
        assert answer.answer_ids == [11, 12, 13] and answer.stats["generated_tokens"] == 3
        plain = store.messages(chats["Plain question"])
        assert [(m.role, m.text, m.prompt) for m in plain] == [
            (Role.USER, "Describe it.", None),
            (Role.ERROR, "Generation failed: out of memory.", None),
        ]
        [extraction] = store.messages(chats["Extracted"])
        assert OcrText.from_message(extraction).markdown == "Total **12.50**"
        assert extraction.stats == {"seconds": 0.3}  # the other formats left the stats
    assert user_version(old_history) == SCHEMA_VERSION == 5


def test_a_version_2_history_is_migrated_its_typed_words_become_the_text(tmp_path):
    folder = copied(2, tmp_path)
    assert user_version(folder) == 2
    with HistoryStore(folder) as store:
        chats = {c.title: c.id for c in store.list_conversations()}
        first, answer, second, stopped = store.messages(chats["Grounded"])
        assert (first.text, first.prompt) == (
            "What is the total?", "Answer briefly.\n\nTotal 12.50\n\nQuestion: What is the total?"
        )  # fmt: skip
        assert (second.text, second.prompt) == ("And the date?", None)
        assert answer.finish is None and stopped.finish is Finish.STOPPED
        question, error = store.messages(chats["Failed"])
        assert (question.role, error.role, error.error_kind) == (Role.USER, Role.ERROR, None)
        [extraction] = store.messages(chats["Extracted"])
        text = OcrText.from_message(extraction)
        assert (text.markdown, text.seconds) == ("Total **12.50**", 0.25)
        assert json.loads(text.json) == {"lines": [{"text": "Total 12.50"}], "tables": []}
        assert text.has_tables is False
        # Search and the list show the typed words, and say how the last answer ended.
        assert [c.title for c in store.list_conversations("Answer briefly")] == []
        found = {c.title: c.preview for c in store.list_conversations("total")}
        assert found["Grounded"] == "Stopped: It is 1 May"
        assert {c.title: c.preview for c in store.list_conversations()}["Failed"].startswith(
            "Failed: The server"
        )
        exported = conversation_markdown("Grounded", store.messages(chats["Grounded"]), str)
    assert "## You\n\n*With your system prompt*\n\n" in exported
    assert "Answer briefly" not in exported and "What is the total?" in exported
    assert "## DeskLens (stopped by you)" in exported
    assert user_version(folder) == SCHEMA_VERSION
    with sqlite3.connect(folder / "history.sqlite3") as connection:  # nothing left behind
        assert connection.execute(
            "SELECT count(*) FROM messages WHERE typed IS NOT NULL"
        ).fetchone() == (0,)


def test_new_questions_keep_how_they_were_asked_and_reopen_so(old_history, sample_image):
    settings = GenerationSettings(max_new_tokens=300, json_schema={"type": "object"})
    asked = AskedWith(settings, "json", grounded=True)
    with HistoryStore(old_history) as store:
        chat = store.create_conversation("New")
        image = load_image(sample_image)
        prompt = "Image text here\n\nQuestion: Is it paid?"
        stored = store.add_message(chat, "user", "Is it paid?", [image], prompt=prompt, asked=asked)
        assert (stored.text, stored.prompt, stored.asked) == ("Is it paid?", prompt, asked)
        store.add_message(chat, "error", "Out of memory.", error_kind=ErrorKind.FAILED)
    with HistoryStore(old_history) as store:  # opened again: nothing to migrate twice
        again, error = store.messages(chat)
        assert (again.text, again.prompt, again.asked) == ("Is it paid?", prompt, asked)
        assert again.asked.settings.json_schema == {"type": "object"}
        assert error.error_kind is ErrorKind.FAILED


def test_damaged_stored_settings_read_as_unknown(old_history):
    with HistoryStore(old_history) as store:
        chat = store.create_conversation("New")
        message = store.add_message(chat, "user", "Hi", asked=AskedWith(GenerationSettings()))
    with sqlite3.connect(old_history / "history.sqlite3") as connection:
        connection.execute(
            "UPDATE messages SET settings = ?, finish = 'later' WHERE id = ?",
            ('{"max_new_tokens": "many"}', message.id),
        )
    with HistoryStore(old_history) as store:
        [again] = store.messages(chat)
        assert again.asked.settings is None and again.finish is None


def test_a_history_newer_than_this_code_is_refused_untouched(old_history):
    with sqlite3.connect(old_history / "history.sqlite3") as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = (old_history / "history.sqlite3").read_bytes()
    with pytest.raises(Exception, match="newer version of DeskLens"):
        HistoryStore(old_history)
    assert (old_history / "history.sqlite3").read_bytes() == before


def test_a_damaged_version_1_history_is_recovered_with_its_messages(old_history, tmp_path):
    """Recovery reads the columns the damaged file has: a version-1 file has no `typed`."""
    from desktop.core.history.database import open_database
    from desktop.core.history_recovery import recover_into

    (tmp_path / "fresh").mkdir()
    fresh = open_database(tmp_path / "fresh" / "history.sqlite3").connection
    try:
        recovery = recover_into(old_history / "history.sqlite3", fresh)
        texts = [row[0] for row in fresh.execute("SELECT text FROM messages ORDER BY id")]
    finally:
        fresh.close()
    assert recovery.messages == 6 and len(texts) == 6 and recovery.older_schema
    assert texts[1] == "The total is 12.50."


def test_a_damaged_version_2_history_is_recovered_as_schema_3(tmp_path):
    """The recovered rows are upgraded like a migrated file's: the typed words as the text."""
    folder = copied(2, tmp_path)
    database = folder / "history.sqlite3"
    data = bytearray(database.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[-page_size:] = b"\xa5" * page_size  # the last page (an index): the rows stay readable
    database.write_bytes(bytes(data))
    with HistoryStore(folder) as store:
        assert store.recovered_from is not None
        questions = [
            m for c in store.list_conversations() for m in store.messages(c.id)
            if m.role is Role.USER
        ]  # fmt: skip
    assert {q.text for q in questions} >= {"What is the total?", "And the date?"}
