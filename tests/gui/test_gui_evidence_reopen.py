"""A grounded answer's evidence shows again after its chat is reopened (issue 49, part 4): the
question was grounded in the service's own read of the picture (no Extract text, so nothing
in the chat holds that read), the evidence found after the answer is kept with it in the
history, and reopening the chat from the sidebar, in the same window or after a restart,
outlines the same lines and links the same figures. A schema-4 history (answers stored before
evidence was kept) opens without evidence and without an error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gui_support import SIGNAL_TIMEOUT_MS
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from test_gui_evidence import fixed_answer, green_at, notes, page, question_thumbnail, send_grounded
from test_gui_evidence_links import anchors, answer_card, click_link

from desktop.core.evidence import Evidence
from desktop.gui.widgets.outlines import Marks

ANSWER = "The total due is **12450.50**; the tax is 7,777.00."
V4_HISTORY = Path(__file__).parents[1] / "core" / "data" / "history-v4"


def open_from_sidebar(qtbot, window, chat_id: int) -> None:
    """Clicks the chat's row in the sidebar, as a user does."""
    chats = window.sidebar.list
    [row] = [
        r for r in range(chats.count()) if chats.item(r).data(Qt.ItemDataRole.UserRole) == chat_id
    ]
    rect = chats.visualItemRect(chats.item(row))
    qtbot.mouseClick(chats.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.session.conversation_id == chat_id


def has_links(window) -> bool:
    return any('href="evidence:' in w.text() for w in answer_card(window).findChildren(QLabel))


def shown_again(qtbot, window, total) -> None:
    """The quoted line outlined, the figure a link that opens the image with it flashed, and
    the figure on no line named, as right after the answer."""
    thumb = question_thumbnail(window)
    qtbot.waitUntil(lambda: bool(thumb.evidence) and has_links(window), timeout=SIGNAL_TIMEOUT_MS)
    assert thumb.evidence == (total,) and green_at(thumb, total)
    assert "7,777.00" in notes(window)[0]
    [label] = [w for w in answer_card(window).findChildren(QLabel) if 'href="evidence:' in w.text()]
    assert anchors(label, "12450.50") == ["evidence:0"]
    viewer = click_link(qtbot, window, label)
    assert viewer.marks == Marks((), (total,), total)
    viewer.close()


def test_a_grounded_answers_evidence_is_back_after_reopening(
    qtbot, launch, tiny_ir, monkeypatch, tmp_path
):
    fixed_answer(monkeypatch, ANSWER)
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    result = send_grounded(qtbot, window, page())
    [read] = result.reads
    [total] = [tuple(line.box) for line in read.lines if "12,450.50" in line.text]
    chat_id = result.request.conversation_id
    thumb = question_thumbnail(window)
    qtbot.waitUntil(lambda: bool(thumb.evidence), timeout=SIGNAL_TIMEOUT_MS)
    # Kept with the answer, written on the storage thread.
    qtbot.waitUntil(lambda: bool(window.store.evidence_of(chat_id)), timeout=SIGNAL_TIMEOUT_MS)
    [kept] = window.store.evidence_of(chat_id).values()
    evidence = Evidence.from_dict(json.loads(kept))
    assert [line.box for line in evidence.lines] == [total] and "7,777.00" in evidence.not_found
    assert all(e.ocr is None for e in window.session.transcript.entries)  # no extraction

    window.sidebar.select(None)  # New chat (Ctrl+N): the chat is closed ...
    assert question_thumbnail_count(window) == 0
    open_from_sidebar(qtbot, window, chat_id)  # ... and reopened from the sidebar
    shown_again(qtbot, window, total)
    window.close()

    reopened = launch(data_dir=data, model_dir=tiny_ir)  # a restart
    reopened.sidebar.select(None)
    open_from_sidebar(qtbot, reopened, chat_id)
    shown_again(qtbot, reopened, total)


def question_thumbnail_count(window) -> int:
    from desktop.gui.widgets.messages import UserMessage

    return len([m for m in window.chat.messages() if isinstance(m, UserMessage)])


def test_a_schema_4_history_opens_without_evidence(qtbot, launch, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(V4_HISTORY, data / "history")
    window = launch(data_dir=data)
    [chat] = window.store.list_conversations()
    window.sidebar.select(None)
    open_from_sidebar(qtbot, window, chat.id)
    assert [m.text() for m in window.chat.messages()][1:] == ["The total is 12.50."]
    assert window.evidence.pending == {}  # nothing kept, no extraction: nothing looked up
    assert question_thumbnail(window).evidence == () and notes(window) == []
