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


def test_an_answer_that_ends_after_its_chat_was_opened_again_is_shown_under_its_question(
    qtbot, launch, tiny_ir, tmp_path
):
    """Opening the chat again while it answers stops the answer, which is stored after the
    view read the store: the stopped answer still comes into the view, as reopening shows it
    (the random-session walk found the window and the history disagreeing here)."""
    from gui_support import hold_after_first_token

    window = launch(data_dir=tmp_path / "data", model_dir=tiny_ir)
    first = send_quick(qtbot, window)
    chat = first.request.conversation_id
    holding = hold_after_first_token(window)
    window.composer.editor.setPlainText("And the date?")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(holding.is_set, timeout=SIGNAL_TIMEOUT_MS)

    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as shown:
        window.open_conversation(chat)  # the same chat, from the list: the answer stops
    result = shown.args[0]

    assert result.answer.finish_reason == "stopped"
    stored = [(m.id, m.role) for m in window.store.messages(chat)]
    kept = [(e.message_id, e.role) for e in window.session.transcript.entries]
    assert kept == stored and len(stored) == 4
    assert [type(m) for m in window.chat.messages()] == [
        UserMessage, AssistantMessage, UserMessage, AssistantMessage,
    ]  # fmt: skip
    assert not [m for m in window.chat.messages() if isinstance(m, ErrorMessage)]


def send_quick(qtbot, window):
    from gui_support import send

    window.apply_settings(replace(window.settings, max_new_tokens=8))
    return send(qtbot, window, QUESTION, [text_image("Invoice 4471")])


def test_retry_from_the_card_keeps_an_extraction_shown_after_it(qtbot, launch, tiny_ir, tmp_path):
    """Extract text on the unanswered question's picture, then Retry on its card: only the
    card goes (the random session saw the extraction vanish from the view, kept in the chat)."""
    from desktop.gui.widgets.messages import OcrMessage

    data = tmp_path / "data"
    chat = killed_mid_answer(data)
    window = launch(data_dir=data, model_dir=tiny_ir)
    window.apply_settings(replace(window.settings, max_new_tokens=8))
    window.open_conversation(chat)
    question = window.chat.messages()[0]
    qtbot.mouseClick(buttons(question)["Extract text"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: any(isinstance(m, OcrMessage) for m in window.chat.messages()),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    [card] = [m for m in window.chat.messages() if isinstance(m, ErrorMessage)]

    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.mouseClick(buttons(card)["Retry"], Qt.MouseButton.LeftButton)

    assert [type(m) for m in window.chat.messages()] == [UserMessage, OcrMessage, AssistantMessage]
    shown = {m.entry_id for m in window.chat.messages()}
    assert shown == {e.id for e in window.session.transcript.entries}
