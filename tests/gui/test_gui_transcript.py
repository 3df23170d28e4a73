"""The chat as data in the window (issue 37): a chat reopened after a restart is the session's
`Transcript`, and its Retry and Regenerate ask each question the way it was asked."""

from __future__ import annotations

import json

from gui_support import SIGNAL_TIMEOUT_MS, send, text_image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton

from desktop.core.chat import ErrorKind
from desktop.core.history import Role
from desktop.core.images import load_image
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.messages import AssistantMessage, ErrorMessage


def click(qtbot, widget, label: str, signal):
    button = next(b for b in widget.findChildren(QToolButton) if b.text() == label)
    with qtbot.waitSignal(signal, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    return blocker.args[0]


def only(window, kind):
    [widget] = [m for m in window.chat.messages() if isinstance(m, kind)]
    return widget


def test_regenerate_on_a_reopened_chat_keeps_the_json_preset(qtbot, launch, tiny_ir, tmp_path):
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    image = ImageRef.of(load_image(text_image("Invoice 4471")))
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        window.asking.run_preset("json", [image])
    first = blocker.args[0]
    schema = first.request.settings.json_schema
    assert schema is not None and isinstance(json.loads(first.answer.text), dict)
    chat_id = first.request.conversation_id
    window.close()

    reopened = launch(data_dir=data, model_dir=tiny_ir)  # a restart: today's defaults differ
    reopened.open_conversation(chat_id)
    question, answer = reopened.session.transcript.entries
    assert question.asked.preset == "json" and question.asked.settings.json_schema == schema
    again = click(
        qtbot, only(reopened, AssistantMessage), "Regenerate", reopened.asking.answer_shown
    )
    assert again.request.settings.json_schema == schema and again.request.preset == "json"
    assert isinstance(json.loads(again.answer.text), dict)  # still JSON
    assert again.user_message_id == question.message_id
    roles = [m.role for m in reopened.store.messages(chat_id)]
    assert roles == [Role.USER, Role.ASSISTANT]  # the old answer went, the question stayed


def test_a_failed_question_survives_a_restart_with_its_retry(qtbot, launch, tiny_ir, tmp_path):
    data = tmp_path / "data"
    window = launch(data_dir=data)  # no model: the answer fails
    failed = send(qtbot, window, "What is the number?", [text_image("Invoice 4471")])
    assert failed.answer.error_kind is ErrorKind.NO_MODEL
    chat_id = failed.request.conversation_id
    assert chat_id is not None
    window.close()

    reopened = launch(data_dir=data, model_dir=tiny_ir)
    reopened.open_conversation(chat_id)
    kinds = [(e.role, e.text) for e in reopened.session.transcript.entries]
    assert kinds == [(Role.USER, "What is the number?"), (Role.ERROR, failed.answer.error)]
    result = click(qtbot, only(reopened, ErrorMessage), "Retry", reopened.asking.answer_shown)
    assert result.answer.ok and result.user_message_id == failed.user_message_id
    assert len(result.request.images) == 1  # asked with its picture
    assert [m.role for m in reopened.store.messages(chat_id)] == [Role.USER, Role.ASSISTANT]
    assert not [m for m in reopened.chat.messages() if isinstance(m, ErrorMessage)]
    assert [e.role for e in reopened.session.transcript.entries] == [Role.USER, Role.ASSISTANT]
