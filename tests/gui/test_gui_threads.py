"""The GUI thread never writes: every history and settings write, and every exported file, is
made on a worker thread (engine, OCR or storage), so a large picture or a slow disk never
stalls the window. Each write method is patched to record the thread that calls it."""

from __future__ import annotations

import threading
from dataclasses import replace

from gui_support import SIGNAL_TIMEOUT_MS, send, text_image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QToolButton

from desktop.core import atomic
from desktop.core.history import HistoryStore
from desktop.core.history.image_files import ImageFiles
from desktop.core.user_presets import PresetBook, UserPreset
from desktop.gui.flows import save_as
from desktop.gui.settings import SettingsStore
from desktop.gui.widgets.messages import AssistantMessage, OcrMessage, UserMessage

HISTORY_WRITES = (
    "create_conversation",
    "rename_conversation",
    "delete_conversation",
    "add_message",
    "update_message",
    "delete_message",
    "delete_messages",
)


def record_writes(monkeypatch) -> list[tuple[str, str]]:
    """(method, thread name) for every write made from now on."""
    calls: list[tuple[str, str]] = []
    targets = [(HistoryStore, name) for name in HISTORY_WRITES]
    targets += [(SettingsStore, "save"), (SettingsStore, "set_window_state")]
    targets += [(ImageFiles, "write"), (save_as, "write_file")]
    targets += [(atomic, "write_text"), (atomic, "write_bytes")]  # chat export, presets
    for owner, name in targets:
        original = getattr(owner, name)

        def recorder(*args, _original=original, _name=name, **kwargs):
            calls.append((_name, threading.current_thread().name))
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, name, recorder)
    return calls


def on_gui_thread(calls: list[tuple[str, str]]) -> list[str]:
    main = threading.main_thread().name
    return [name for name, thread in calls if thread == main]


def test_the_gui_thread_makes_no_history_settings_or_file_write(
    qtbot, launch, tiny_ir, tmp_path, monkeypatch
):
    calls = record_writes(monkeypatch)
    window = launch(model_dir=tiny_ir)
    picture = text_image("Invoice 4471")

    # A new chat with a picture (created, question and answer stored), then its text.
    result = send(qtbot, window, "What is the number?", [picture])
    assert result.answer.ok and result.request.conversation_id is not None
    window.composer.add_images([result.request.images[0]])
    window.extraction.extract_all()
    qtbot.waitUntil(
        lambda: any(isinstance(m, OcrMessage) for m in window.chat.messages()),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    message = next(m for m in window.chat.messages() if isinstance(m, OcrMessage))

    # Save the text as a file the user picks.
    target = tmp_path / "number.txt"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "Plain text (*.txt)")
    )
    save = next(b for b in message.findChildren(QToolButton) if b.text() == "Save as…")
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)

    # Regenerate the answer, edit the question and send it again, export the chat.
    monkeypatch.setattr(QMessageBox, "question", lambda *a: QMessageBox.StandardButton.Yes)
    answer = next(m for m in window.chat.messages() if isinstance(m, AssistantMessage))
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
        window.rewinding.regenerate(answer.entry_id)
    question = next(m for m in window.chat.messages() if isinstance(m, UserMessage))
    window.rewinding.edit(question.entry_id)
    send(qtbot, window, "Which number?")
    window.exporting.save("md", tmp_path / "chat.md")
    window.exporting.save("html", tmp_path / "chat.html")
    window.own_presets.replace(PresetBook((UserPreset("Totals", "List every total."),)))

    # Rename the chat in the sidebar, change a setting, then delete another chat for good.
    window.sidebar.list.item(0).setText("Invoices")
    qtbot.waitUntil(lambda: window.title_label.text() == "Invoices", timeout=SIGNAL_TIMEOUT_MS)
    window.apply_settings(replace(window.settings, max_new_tokens=64))
    window.sidebar.select(None)
    other = send(qtbot, window, "A second chat")
    window.sidebar.delete_conversation(other.request.conversation_id)
    window.notice.dismiss()
    qtbot.waitUntil(lambda: not window.storage.busy, timeout=SIGNAL_TIMEOUT_MS)
    assert target.read_text(encoding="utf-8") == message.text()
    assert window.sidebar.list.count() == 1

    window.close()  # the window state is saved as it closes
    made = {name for name, _thread in calls}
    assert made >= {
        "create_conversation",
        "add_message",
        "rename_conversation",
        "delete_conversation",
        "save",
        "set_window_state",
        "write",
        "write_file",
        "write_text",
        "write_bytes",
        "delete_messages",
    }
    assert (tmp_path / "chat images").is_dir() and (tmp_path / "chat.html").is_file()
    assert "Totals" in (window.data_dir / "presets.json").read_text(encoding="utf-8")
    assert on_gui_thread(calls) == []


def test_a_failed_background_write_is_reported_in_the_window(qtbot, launch, tmp_path):
    window = launch()
    window.storage.submit(lambda: (tmp_path / "missing" / "out.txt").write_text("x"))
    qtbot.waitUntil(lambda: "out.txt" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS)
    assert "No such file or directory" in window.notice.text()
