"""An answer's evidence is kept with it (schema 5, issue 49): the OCR lines the answer quotes,
with their boxes, and its figures on no line come back the same after the history is opened
again; a schema-4 history (made by that code: data/make_history_v4.py) gains the column, keeps
its rows and has no evidence; a damaged value gives none instead of failing the chat."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from desktop.core.evidence import Evidence, EvidenceLine, find_evidence
from desktop.core.history import HistoryStore, Role
from desktop.core.history.database import SCHEMA_VERSION
from desktop.core.images import load_image
from desktop.core.ocr.models import OcrLine, OcrResult
from desktop.core.regions import Region

DATA = Path(__file__).parent / "data"
ANSWER = 'The total due is 12,450.50 for "Invoice 4471"; the tax is 7,777.00.'


def page_read() -> OcrResult:
    lines = [
        OcrLine("Invoice 4471", (30, 20, 290, 64), 0.99, 0),
        OcrLine("Total due 12450.5", (30, 90, 420, 134), 0.98, 1),
        OcrLine("Thank you", (30, 160, 250, 204), 0.97, 2),
    ]
    return OcrResult(lines=lines, width=900, height=260, seconds=0.1)


def test_an_answers_evidence_is_the_same_after_reopening(tmp_path):
    evidence = find_evidence(ANSWER, [page_read()])
    assert [line.text for line in evidence.lines] == ["Invoice 4471", "Total due 12450.5"]
    assert evidence.not_found == ("7,777.00",)
    folder = tmp_path / "history"
    [picture_file] = (DATA / "history-v1" / "images").glob("*/*.png")
    picture = load_image(picture_file)
    with HistoryStore(folder) as store:
        chat = store.create_conversation("Invoice")
        store.add_message(chat, "user", "What is the total?", [picture])
        answer = store.add_message(chat, "assistant", ANSWER, answer_ids=[1, 2])
        before = store.list_conversations()[0].updated_at
        assert store.set_evidence(answer.id, json.dumps(evidence.to_dict()))
        assert store.list_conversations()[0].updated_at == before  # the chat does not move up
        other = store.create_conversation("Other")
        assert store.evidence_of(other) == {}
    with HistoryStore(folder) as store:  # opened again
        kept = store.evidence_of(chat)
        assert list(kept) == [answer.id]
        again = Evidence.from_dict(json.loads(kept[answer.id]))
        assert again == evidence  # the same lines, boxes, quotes and figures not found
        assert again.lines[1].box == (30, 90, 420, 134)
        assert again.lines[1].quotes == ("12,450.50",)


def test_evidence_goes_with_its_answer_and_only_answers_take_it(store):
    chat = store.create_conversation()
    question = store.add_message(chat, "user", "What is the total?")
    answer = store.add_message(chat, "assistant", "12,450.50")
    text = json.dumps(Evidence(not_found=("12,450.50",)).to_dict())
    assert not store.set_evidence(question.id, text)  # a question has no evidence
    assert store.set_evidence(answer.id, text)
    store.delete_messages(chat, [answer.id])  # a regenerate drops the answer
    assert store.evidence_of(chat) == {}
    assert not store.set_evidence(answer.id, text)  # gone: nothing written


def test_a_schema_4_history_gains_the_column_and_opens_without_evidence(tmp_path):
    folder = tmp_path / "history-v4"
    shutil.copytree(DATA / "history-v4", folder)
    database = folder / "history.sqlite3"
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (4,)
        columns = {row[1] for row in connection.execute("PRAGMA table_info(messages)")}
        assert "evidence" not in columns
    connection.close()
    with HistoryStore(folder) as store:
        [chat] = store.list_conversations()
        question, answer = store.messages(chat.id)
        assert (question.role, answer.role) == (Role.USER, Role.ASSISTANT)
        assert question.asked.regions == (Region(2, 3, 40, 20),) and question.asked.grounded
        assert answer.text == "The total is 12.50." and answer.answer_ids == [5, 6]
        assert store.load_image(question.images[0]).size == (64, 40)
        assert store.evidence_of(chat.id) == {}  # older answers: none kept
        line = EvidenceLine(0, 0, "Total 12.50", (1, 2, 60, 30), ("12.50",))
        assert store.set_evidence(answer.id, json.dumps(Evidence((line,)).to_dict()))
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,) == (5,)
    connection.close()


def test_damaged_evidence_is_dropped_not_the_chat():
    good = {"image": 0, "line": 1, "text": "Total", "box": [1, 2, 3, 4], "quotes": ["12"]}
    damaged = [
        None,
        "lines",
        {"lines": "no"},
        {"lines": [{"image": "0", "line": 1, "text": "x", "box": [1, 2, 3, 4], "quotes": []}]},
        {"lines": [{"image": 0, "line": 1, "text": "x", "box": [1, 2, 3], "quotes": []}]},
        {"lines": [{"image": True, "line": 1, "text": "x", "box": [1, 2, 3, 4], "quotes": []}]},
    ]
    for data in damaged:
        assert Evidence.from_dict(data) == Evidence()
        assert Evidence.from_dict(data).empty
    mixed = {"lines": [good, {"image": 0}], "not_found": ["7", 8]}
    assert Evidence.from_dict(mixed) == Evidence(
        (EvidenceLine(0, 1, "Total", (1, 2, 3, 4), ("12",)),), ("7",)
    )
