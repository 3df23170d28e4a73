"""The history's schema migration: a history written by DeskLens before schema 2 (made by that
code and kept in tests/core/data/history-v1) opens, is brought up to date in place, and reads
as before; questions stored from now on keep the typed words apart from the composed prompt."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from desktop.core.history import HistoryStore, Role
from desktop.core.history.database import SCHEMA_VERSION
from desktop.core.history.ocr_text import OcrText
from desktop.core.images import load_image

V1 = Path(__file__).parent / "data" / "history-v1"


@pytest.fixture
def old_history(tmp_path) -> Path:
    folder = tmp_path / "history"
    shutil.copytree(V1, folder)
    return folder


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
        assert question.text.endswith("Question: What is the total?")
        assert question.typed is None and question.typed_text == "What is the total?"
        assert store.load_image(question.images[0]).size == (64, 40)
        assert answer.answer_ids == [11, 12, 13] and answer.stats["generated_tokens"] == 3
        plain = store.messages(chats["Plain question"])
        assert [(m.role, m.typed_text) for m in plain] == [
            ("user", "Describe it."), ("error", "Generation failed: out of memory.")
        ]  # fmt: skip
        [extraction] = store.messages(chats["Extracted"])
        assert OcrText.from_message(extraction).markdown == "Total **12.50**"
    assert user_version(old_history) == SCHEMA_VERSION == 2


def test_new_questions_keep_the_typed_words_apart_and_reopen_so(old_history, sample_image):
    with HistoryStore(old_history) as store:
        chat = store.create_conversation("New")
        image = load_image(sample_image)
        prompt = "Image text here\n\nQuestion: Is it paid?"
        stored = store.add_message(chat, "user", prompt, [image], typed="Is it paid?")
        assert stored.typed == "Is it paid?" and stored.text == prompt
    with HistoryStore(old_history) as store:  # opened again: nothing to migrate twice
        [again] = store.messages(chat)
        assert (again.text, again.typed, again.typed_text) == (prompt, "Is it paid?", "Is it paid?")


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
    assert recovery.messages == 6 and len(texts) == 6
    assert texts[1] == "The total is 12.50."
