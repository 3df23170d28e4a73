"""Each answer says how much of its image the model read, in words (the card, a reopened
chat, the export: one wording, desktop/core/reading_summary.py); a new answer clears the
status bar's figures, and the composer shows no "Ready" beside Stop."""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS, hold_after_first_token, send
from PySide6.QtCore import Qt

from desktop.core.reading_summary import answer_summary, image_reading
from desktop.gui.widgets.messages import AssistantMessage


def test_the_card_the_reopened_chat_and_the_export_say_how_much_was_read(
    qtbot, launch, tiny_ir, sample_image, tmp_path
):
    window = launch(model_dir=tiny_ir)
    first = send(qtbot, window, "What is in the picture?", [sample_image])
    stats = first.answer.stats
    reading = image_reading(stats)
    assert reading.startswith("read ") and "image blocks" in reading
    card = window.chat.last_answer().meta.text()
    assert card == answer_summary(stats) and card.startswith(reading)
    assert reading in window.status.stats_label.full_text()

    # The next answer: while it runs, the status bar shows no older answer's figures.
    holding = hold_after_first_token(window)
    window.composer.editor.setPlainText("And the colours?")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(holding.is_set, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.send_button.text() == "Stop"
    assert window.status.stats_label.full_text() == ""
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
        qtbot.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)

    target = tmp_path / "chat.md"
    window.exporting.save("md", target)
    qtbot.waitUntil(target.exists, timeout=SIGNAL_TIMEOUT_MS)
    assert f"*{answer_summary(stats)}*" in target.read_text(encoding="utf-8")

    chat = window.conversation_id
    window.open_conversation(None)
    window.open_conversation(chat)
    answers = [m for m in window.chat.messages() if isinstance(m, AssistantMessage)]
    assert answers[0].meta.text() == card  # the same line, from the history


def test_no_ready_beside_stop(qtbot):
    from desktop.gui.widgets.composer import Composer

    composer = Composer()
    qtbot.addWidget(composer)
    composer.set_hint("Ready")  # the chat was read ahead
    assert "Ready" in composer.count_label.text()
    composer.set_generating(True)
    assert "Ready" not in composer.count_label.text()
    composer.set_generating(False)
    assert "Ready" in composer.count_label.text()  # still true once the answer has ended
