"""A question the app never answered — it was killed or crashed while answering, so the
history holds the question and nothing after it — gets Retry and Regenerate when its chat is
opened again, and either asks it in its place."""

from __future__ import annotations

from dataclasses import replace

import pytest
from gui_support import SIGNAL_TIMEOUT_MS, text_image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from desktop.core.history import HistoryStore
from desktop.core.images import load_image
from desktop.gui.flows.rewinding import UNANSWERED_TEXT
from desktop.gui.widgets.messages import AssistantMessage, ErrorMessage, UserMessage

QUESTION = "What is the invoice number?"


def killed_mid_answer(data_dir) -> int:
    """The history as a kill -9 during the answer leaves it: the question stored, no answer."""
    store = HistoryStore(data_dir / "history")
    try:
        chat = store.create_conversation(QUESTION)
        picture = load_image(text_image("Invoice 4471"), name="invoice.png")
        store.add_message(chat, "user", QUESTION, images=[picture])
    finally:
        store.close()
    return chat


def buttons(widget) -> dict[str, QToolButton]:
    return {b.text(): b for b in widget.findChildren(QToolButton)}


@pytest.mark.parametrize("label", ["Retry", "Regenerate"])
def test_a_question_left_unanswered_by_a_kill_is_asked_again_from_its_card(
    qtbot, launch, tiny_ir, tmp_path, label
):
    data = tmp_path / "data"
    chat = killed_mid_answer(data)
    window = launch(data_dir=data, model_dir=tiny_ir)
    window.apply_settings(replace(window.settings, max_new_tokens=8))
    window.open_conversation(chat)

    cards = [m for m in window.chat.messages() if isinstance(m, ErrorMessage)]
    assert [c.text() for c in cards] == [UNANSWERED_TEXT]
    assert {"Retry", "Regenerate"} <= set(buttons(cards[0]))

    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as shown:
        qtbot.mouseClick(buttons(cards[0])[label], Qt.MouseButton.LeftButton)

    result = shown.args[0]
    assert result.answer.ok
    assert [type(m) for m in window.chat.messages()] == [UserMessage, AssistantMessage]
    assert window.chat.messages()[0].text() == QUESTION
    stored = [(m.role, m.text) for m in window.store.messages(chat)]
    assert stored == [("user", QUESTION), ("assistant", result.answer.text)]


def test_an_answered_chat_and_a_question_being_answered_get_no_card(
    qtbot, launch, tiny_ir, tmp_path
):
    from gui_support import send

    window = launch(data_dir=tmp_path / "data", model_dir=tiny_ir)
    window.apply_settings(replace(window.settings, max_new_tokens=8))
    first = send(qtbot, window, QUESTION, [text_image("Invoice 4471")])
    chat = first.request.conversation_id
    window.open_conversation(None)
    window.open_conversation(chat)
    assert not [m for m in window.chat.messages() if isinstance(m, ErrorMessage)]
