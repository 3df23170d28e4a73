"""Asking the tiny model from the GUI: streaming, Stop, errors, history, closing mid-answer.

The tiny model's words are gibberish; these tests check the mechanics around them.
"""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS, hold_after_first_token, send
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolButton

from desktop.core.history import HistoryStore
from desktop.gui.app import HISTORY_FOLDER
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.widgets.messages import AssistantMessage, ErrorMessage, UserMessage


def stored_messages(data_dir):
    with HistoryStore(data_dir / HISTORY_FOLDER) as store:
        conversations = store.list_conversations()
        return conversations, [store.messages(c.id) for c in conversations]


def test_sending_streams_tokens_into_an_answer(qtbot, launch, tiny_ir, sample_image):
    window = launch(model_dir=tiny_ir)
    assert window.status.state == "ready"
    tokens: list[str] = []
    window.engine.worker.token.connect(tokens.append)

    result = send(qtbot, window, "What does the image show?", [sample_image])

    assert result.answer.ok, result.answer.error
    assert tokens and "".join(tokens) == result.answer.text
    user, answer = window.chat.messages()
    assert isinstance(user, UserMessage) and user.text() == "What does the image show?"
    assert len(user.images) == 1
    assert isinstance(answer, AssistantMessage)
    qtbot.waitUntil(lambda: answer.view.plain_text() != "")
    assert answer.text() == result.answer.text
    assert not answer.streaming and not answer.badge.isVisible()
    assert "tokens/s" in answer.meta.text() or result.answer.stats.generated_tokens < 2
    assert "TTFT" in window.status.stats_label.text()
    assert window.composer.send_button.text() == "Send"
    assert window.composer.editor.toPlainText() == ""
    assert window.composer.attachments() == []
    assert window.sidebar.list.count() == 1
    assert window.title_label.text() == "What does the image show?"


def test_enter_sends_and_shift_enter_adds_a_line(qtbot, launch):
    window = launch()
    editor = window.composer.editor
    sent = []
    window.composer.send_requested.connect(lambda q, images: sent.append(q))
    editor.setFocus()
    qtbot.keyClicks(editor, "first")
    qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(editor, "second")
    assert editor.toPlainText() == "first\nsecond"
    assert sent == []
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert sent == ["first\nsecond"]


def test_stop_ends_the_answer_and_keeps_the_partial_text(qtbot, launch, tiny_ir, sample_image):
    window = launch(model_dir=tiny_ir)
    holding = hold_after_first_token(window)
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    window.composer.add_images([ImageRef.of(load_image(sample_image))])
    window.composer.editor.setPlainText("Describe it at length")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(holding.is_set, timeout=SIGNAL_TIMEOUT_MS)
    answer = window.chat.messages()[-1]
    qtbot.waitUntil(lambda: answer.text() != "", timeout=SIGNAL_TIMEOUT_MS)
    partial = answer.text()
    assert window.composer.send_button.text() == "Stop"
    assert window.status.state == "generating"

    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)
    result = blocker.args[0]

    assert result.answer.finish_reason == "stopped"
    assert result.answer.text == partial
    assert answer.text() == partial and answer.stopped and answer.badge.isVisible()
    assert window.composer.send_button.text() == "Send"
    _, [messages] = stored_messages(window.data_dir)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].stopped and messages[1].text == partial
    assert messages[1].answer_ids  # the stopped turn stays in the conversation


def test_escape_stops_too(qtbot, launch, tiny_ir):
    window = launch(model_dir=tiny_ir)
    holding = hold_after_first_token(window)
    window.composer.editor.setPlainText("Tell me a long story")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(holding.is_set, timeout=SIGNAL_TIMEOUT_MS)
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Escape)
    assert blocker.args[0].answer.finish_reason == "stopped"


def test_conversation_persists_and_can_be_continued(qtbot, launch, tiny_ir, sample_image, tmp_path):
    data = tmp_path / "shared-data"
    data.mkdir()
    # Replaying by the follow-up itself (test_gui_prepare covers the chat read ahead instead).
    SettingsStore(data).save(AppSettings(prepare_ahead=False))
    first = launch(data_dir=data, model_dir=tiny_ir)
    answer_one = send(qtbot, first, "What is in the picture?", [sample_image]).answer
    assert answer_one.ok
    first.close()

    second = launch(data_dir=data, model_dir=tiny_ir)
    assert second.sidebar.list.count() == 1
    item = second.sidebar.list.item(0)
    conversation_id = item.data(Qt.ItemDataRole.UserRole)
    assert item.text() == "What is in the picture?"
    rect = second.sidebar.list.visualItemRect(item)
    qtbot.mouseClick(second.sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    user, answer = second.chat.messages()
    assert isinstance(user, UserMessage) and len(user.images) == 1
    assert user.images[0].path is not None and user.images[0].path.is_file()
    assert isinstance(answer, AssistantMessage) and answer.text() == answer_one.text
    assert "tokens/s" in answer.meta.text() or answer_one.stats.generated_tokens < 2

    follow_up = send(qtbot, second, "And what colour is the bar?")
    assert follow_up.answer.ok, follow_up.answer.error
    # The first turn was replayed from the history, image included, for the new engine.
    assert follow_up.answer.stats.images_encoded == 1
    assert follow_up.request.conversation_id == conversation_id
    _, [messages] = stored_messages(data)
    assert [m.role for m in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[3].stats["generated_tokens"] == follow_up.answer.stats.generated_tokens


def test_deleting_a_conversation_removes_it_and_its_orphaned_images(qtbot, launch, tmp_path):
    from PIL import Image

    from desktop.core.images import load_image

    data = tmp_path / "data"
    shared = load_image(Image.new("RGB", (30, 20), (250, 0, 0)), name="shared.png")
    only_doomed = load_image(Image.new("RGB", (30, 20), (0, 0, 250)), name="doomed.png")
    with HistoryStore(data / HISTORY_FOLDER) as store:
        keep = store.create_conversation("Keep me")
        store.add_message(keep, "user", "kept", [shared])
        doomed = store.create_conversation("Delete me")
        store.add_message(doomed, "user", "going", [shared, only_doomed])
        images = store.images_folder
    assert len(list(images.glob("*/*.png"))) == 2

    window = launch(data_dir=data)
    titles = [window.sidebar.list.item(r).text() for r in range(window.sidebar.list.count())]
    assert titles == ["Delete me", "Keep me"]
    window.sidebar.list.setCurrentRow(0)
    window.sidebar.list.setFocus()
    qtbot.keyClick(window.sidebar.list, Qt.Key.Key_Delete)
    assert window.sidebar.list.count() == 1
    assert 'Deleted "Delete me"' in window.notice.text()

    # Undo brings it back; deleting again and letting the offer lapse deletes it for good.
    qtbot.mouseClick(window.notice.action_button, Qt.MouseButton.LeftButton)
    assert window.sidebar.list.count() == 2
    window.sidebar.delete_conversation(doomed)
    window.notice.dismiss()
    qtbot.waitUntil(lambda: not window.storage.busy)  # deleted on the storage thread

    remaining = [p.stem for p in images.glob("*/*.png")]
    assert remaining == [shared.digest]
    conversations, _ = stored_messages(data)
    assert [c.title for c in conversations] == ["Keep me"]


def test_rename_and_search_conversations(qtbot, launch, tmp_path):
    data = tmp_path / "data"
    with HistoryStore(data / HISTORY_FOLDER) as store:
        receipt = store.create_conversation("Receipt")
        store.add_message(receipt, "user", "what is the VAT number?")
        store.create_conversation("Slides")
    window = launch(data_dir=data)
    window.sidebar.search.setText("vat")
    assert [window.sidebar.list.item(r).text() for r in range(window.sidebar.list.count())] == [
        "Receipt"
    ]
    window.sidebar.search.clear()
    item = window.sidebar.list.item(1)
    item.setText("Lunch receipt")  # what finishing the in-place editor does
    qtbot.waitUntil(lambda: not window.storage.busy)  # renamed on the storage thread
    conversations, _ = stored_messages(data)
    assert sorted(c.title for c in conversations) == ["Lunch receipt", "Slides"]


def test_closing_during_generation_stops_and_exits_cleanly(qtbot, launch, tiny_ir, tmp_path):
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    holding = hold_after_first_token(window)
    window.composer.editor.setPlainText("Write a very long answer")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(holding.is_set, timeout=SIGNAL_TIMEOUT_MS)

    window.close()

    assert window.engine.thread.isFinished()
    assert window.ocr.thread.isFinished()
    _, [messages] = stored_messages(data)
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[1].stopped  # the partial answer was kept


def test_model_load_error_is_shown_and_ocr_still_works(qtbot, launch, tiny_ir, tmp_path):
    import shutil

    from gui_support import text_image

    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    broken = tmp_path / "broken-model"
    shutil.copytree(tiny_ir, broken)
    weights = broken / "openvino_language_model.bin"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])

    window = launch(model_dir=broken, wait_model=False)
    qtbot.waitUntil(lambda: "damaged" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS)
    assert "openvino_language_model.bin" in window.notice.text()
    assert window.status.state == "error"
    assert window.first_run_holder.isVisible()
    assert "damaged" in window.first_run.explanation.text()

    # Asking explains that there is no model, inline, with Retry.
    window.composer.editor.setPlainText("Anything?")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    error = window.chat.messages()[-1]
    assert isinstance(error, ErrorMessage) and "damaged" in error.text()
    assert [b.text() for b in error.findChildren(QToolButton) if b.text() == "Retry"] == ["Retry"]

    # The fast OCR does not need the model.
    window.extraction.extract_text([ImageRef.of(load_image(text_image("Invoice 4821")))])
    qtbot.waitUntil(lambda: "4821" in window.chat.messages()[-1].text(), timeout=SIGNAL_TIMEOUT_MS)


def test_retry_after_an_error_answers_once_the_model_is_there(qtbot, launch, tiny_ir):
    window = launch()  # no model yet
    window.composer.editor.setPlainText("Hello?")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    error = window.chat.messages()[-1]
    assert isinstance(error, ErrorMessage)

    window.load_model(str(tiny_ir))
    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    [retry] = [b for b in error.findChildren(QToolButton) if b.text() == "Retry"]
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
    assert blocker.args[0].answer.ok
    kinds = [type(m) for m in window.chat.messages()]
    assert kinds == [UserMessage, AssistantMessage]
    _, [messages] = stored_messages(window.data_dir)
    assert [m.role for m in messages] == ["user", "assistant"]


def test_copy_last_answer_shortcut(qtbot, launch, tiny_ir):
    window = launch(model_dir=tiny_ir)
    result = send(qtbot, window, "Say something")
    QApplication.clipboard().clear()
    qtbot.keyClick(
        window,
        Qt.Key.Key_C,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert QApplication.clipboard().text() == result.answer.text


def test_new_chat_shortcut_clears_the_view(qtbot, launch, tiny_ir):
    window = launch(model_dir=tiny_ir)
    send(qtbot, window, "First chat")
    assert window.chat.messages()
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.chat.messages() == []
    assert window.conversation_id is None
    assert window.chat.empty_state.isVisibleTo(window.chat)


def test_retry_on_an_error_of_a_reopened_chat_answers_in_that_chat(qtbot, launch, tiny_ir):
    """Retry on an error bubble of a chat opened from the history (it once built its request
    with the chat's id where the chat itself was expected: the slot raised, nothing was
    answered and the window stayed busy)."""
    window = launch(model_dir=tiny_ir)
    store = window.store
    chat_id = store.create_conversation("Earlier chat")
    question = store.add_message(chat_id, "user", "What is the total?")
    store.add_message(chat_id, "error", "Generation failed: the machine was asleep.")
    window.open_conversation(chat_id)
    error = window.chat.messages()[-1]
    assert isinstance(error, ErrorMessage)
    [retry] = [b for b in error.findChildren(QToolButton) if b.text() == "Retry"]
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result.answer.ok and result.request.chat.id == chat_id
    assert not window.engine.status.asking
    assert [type(m) for m in window.chat.messages()] == [UserMessage, AssistantMessage]
    stored = store.messages(chat_id)
    assert [(m.role, m.id) for m in stored] == [
        ("user", question.id), ("assistant", result.answer_message_id)
    ]  # fmt: skip
