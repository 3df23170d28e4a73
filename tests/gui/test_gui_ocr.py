"""One-click text extraction (fast OCR) from the GUI: single images, batches, cancel, save."""

from __future__ import annotations

import json
import os

from gui_support import SIGNAL_TIMEOUT_MS, drop_on, file_mime, save_png, text_image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QToolButton

from desktop.core.history import HistoryStore
from desktop.gui.app import HISTORY_FOLDER
from desktop.gui.widgets.basics import Thumbnail
from desktop.gui.widgets.messages import OcrMessage


def ocr_messages(window) -> list[OcrMessage]:
    return [m for m in window.chat.messages() if isinstance(m, OcrMessage)]


def button(widget, text: str) -> QToolButton:
    return next(b for b in widget.findChildren(QToolButton) if b.text() == text)


def attach_files(qtbot, window, *paths) -> None:
    drop_on(window, file_mime(*paths))
    qtbot.waitUntil(lambda: len(window.composer.chips()) == len(paths), timeout=SIGNAL_TIMEOUT_MS)


def test_extract_text_on_an_attached_image_shows_its_text(qtbot, launch, tmp_path):
    window = launch()  # no model: the fast OCR works without it
    attach_files(qtbot, window, save_png(text_image("Total due 320.04"), tmp_path / "bill.png"))
    chip = window.composer.chips()[0]
    extract = next(a for a in chip.actions() if a.text() == "Extract text")
    extract.trigger()

    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    message = ocr_messages(window)[0]
    assert "Total due 320.04" in message.text()
    assert "Total due 320.04" in message.label.text()
    assert message.image.name == "bill.png"
    assert window.composer.chips()  # still attached, to ask about it next
    assert window.sidebar.list.count() == 1

    with HistoryStore(window.data_dir / HISTORY_FOLDER) as store:
        [stored] = store.messages(window.conversation_id)
    assert stored.role == "ocr" and "320.04" in stored.text
    assert [image.name for image in stored.images] == ["bill.png"]


def test_the_open_app_answers_desklens_ocr_and_takes_files_from_the_command_line(
    qtbot, launch, tmp_path, monkeypatch
):
    from desktop.core.ocr.service import OcrRequest, ask_service, hand_to_open_app, ping

    monkeypatch.setenv("DESKLENS_DATA_DIR", str(tmp_path / "data"))  # the window's folder
    window = launch()
    assert window.data_dir == tmp_path / "data"
    qtbot.waitUntil(lambda: ping() == os.getpid(), timeout=SIGNAL_TIMEOUT_MS)
    shot = save_png(text_image("Invoice 8812 paid"), tmp_path / "invoice.png")
    reply = ask_service(OcrRequest(str(shot), "md"))
    assert reply is not None and reply.status == "ok" and "Invoice 8812 paid" in reply.output
    assert window.sidebar.list.count() == 0  # a terminal's request is not a chat of the app
    assert hand_to_open_app([shot])  # `desklens invoice.png` while the app is open
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.chips()[0].ref.name == "invoice.png"
    window.close()
    assert ping() is None and ask_service(OcrRequest(str(shot))) is None


def test_a_table_is_shown_as_a_table_and_copied_as_text(qtbot, launch, tmp_path):
    from ocr_pages import TABLE, ruled_table

    from desktop.gui.widgets.markdown_view import MarkdownView

    window = launch()
    attach_files(qtbot, window, save_png(ruled_table(TABLE), tmp_path / "stock.png"))
    chip = window.composer.chips()[0]
    next(a for a in chip.actions() if a.text() == "Extract text").trigger()
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    message = ocr_messages(window)[0]
    assert isinstance(message.label, MarkdownView)
    [grid] = message.label.findChildren(QLabel)
    assert "<table" in grid.text() and ">Keyboard<" in grid.text()
    assert "Monitor\t3\t219.00" in message.text()  # Copy gives the tab-separated cells
    window.close()
    again = launch(data_dir=window.data_dir)  # rebuilt from the history: still a table
    again.sidebar.select(again.sidebar.list.item(0).data(Qt.ItemDataRole.UserRole))
    [stored] = ocr_messages(again)
    assert isinstance(stored.label, MarkdownView)


def test_extract_text_from_an_image_in_the_chat(qtbot, launch, tmp_path):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.widgets.messages import UserMessage

    window = launch()
    ref = ImageRef.of(load_image(text_image("Meeting at 10:30"), name="note.png"))
    window.session.ensure("chat")
    window.chat.add(UserMessage("what time?", [ref], window.actions_hub))
    [thumb] = window.chat.messages()[0].findChildren(Thumbnail)
    next(a for a in thumb.actions() if a.text() == "Extract text").trigger()
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert "10:30" in ocr_messages(window)[0].text()


def test_extracted_text_survives_a_restart_with_all_formats(qtbot, launch, tmp_path):
    data = tmp_path / "data"
    window = launch(data_dir=data)
    attach_files(qtbot, window, save_png(text_image("Order 5531"), tmp_path / "order.png"))
    window.extraction.extract_all()
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.chips() == []  # "from all" consumes the attachments
    [original] = [e.ocr for e in window.session.transcript.entries if e.ocr is not None]
    window.close()

    again = launch(data_dir=data)
    again.sidebar.select(again.sidebar.list.item(0).data(Qt.ItemDataRole.UserRole))
    [message] = ocr_messages(again)
    [entry] = [e for e in again.session.transcript.entries if e.ocr is not None]
    assert message.text() == entry.ocr.text == original.text
    assert entry.ocr.markdown == original.markdown
    assert json.loads(entry.ocr.json) == json.loads(original.json)
    assert message.image.path is not None and message.image.path.is_file()


def test_batch_extraction_shows_progress_and_can_be_cancelled(qtbot, launch, tmp_path):
    window = launch()
    files = [
        save_png(text_image(f"Page number {n}"), tmp_path / f"page{n}.png") for n in range(1, 4)
    ]
    attach_files(qtbot, window, *files)

    # Hold the worker after its first image until Cancel is pressed, like a slow machine.
    def hold(outcome) -> None:
        outcome.job.cancel.wait(SIGNAL_TIMEOUT_MS / 1000)

    window.ocr.worker.extracted.connect(hold, Qt.ConnectionType.DirectConnection)
    window.extraction.extract_all()
    assert window.status.progress.isVisible()
    assert window.status.progress.maximum() == 3
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.mouseClick(window.status.cancel_button, Qt.MouseButton.LeftButton)

    qtbot.waitUntil(
        lambda: "cancelled after 1 of 3" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS
    )
    assert not window.status.progress.isVisible()
    assert len(ocr_messages(window)) == 1
    assert "Page number 1" in ocr_messages(window)[0].text()


def test_batch_extraction_reads_every_image(qtbot, launch, tmp_path):
    window = launch()
    files = [save_png(text_image(f"Sheet {n}"), tmp_path / f"s{n}.png") for n in (7, 8)]
    attach_files(qtbot, window, *files)
    window.extract_all_button.click()
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 2, timeout=SIGNAL_TIMEOUT_MS)
    first, second = ocr_messages(window)
    assert "Sheet 7" in first.text() and "Sheet 8" in second.text()
    qtbot.waitUntil(lambda: not window.status.progress.isVisible(), timeout=SIGNAL_TIMEOUT_MS)


def test_save_as_writes_the_chosen_format(qtbot, launch, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    window = launch()
    attach_files(qtbot, window, save_png(text_image("Ref AB-12"), tmp_path / "ref.png"))
    window.extraction.extract_all()
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    message = ocr_messages(window)[0]
    target = tmp_path / "out" / "ref.json"
    target.parent.mkdir()
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "JSON (*.json)")
    )
    save_button = button(message, "Save as…")
    qtbot.mouseClick(save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.storage.busy)  # written on the storage thread
    data = json.loads(target.read_text(encoding="utf-8"))
    assert "AB-12" in " ".join(line["text"] for line in data["lines"])

    no_suffix = tmp_path / "out" / "plain"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (str(no_suffix), "Markdown (*.md)")
    )
    qtbot.mouseClick(save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.storage.busy)
    assert "AB-12" in (tmp_path / "out" / "plain.md").read_text(encoding="utf-8")


def test_refine_with_ai_runs_the_markdown_preset_on_that_image(qtbot, launch, tiny_ir, tmp_path):
    from desktop.core.presets import get_preset
    from desktop.gui.widgets.messages import AssistantMessage, UserMessage

    window = launch(model_dir=tiny_ir)
    attach_files(qtbot, window, save_png(text_image("Heading"), tmp_path / "doc.png"))
    window.extraction.extract_all()
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    message = ocr_messages(window)[0]
    refine = button(message, "Refine with AI")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(refine, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert result.request.question == get_preset("markdown").prompt
    assert [ref.digest for ref in result.request.images] == [message.image.digest]
    assert result.answer.ok
    kinds = [type(m) for m in window.chat.messages()]
    assert kinds == [OcrMessage, UserMessage, AssistantMessage]


def test_clicking_a_chat_image_opens_it_large_with_extract_text(qtbot, launch, tmp_path):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.widgets.image_viewer import ImageViewer
    from desktop.gui.widgets.messages import UserMessage

    window = launch()
    ref = ImageRef.of(load_image(text_image("Gate B12", (900, 300)), name="ticket.png"))
    window.session.ensure("trip")
    window.chat.add(UserMessage("which gate?", [ref], window.actions_hub))
    [thumb] = window.chat.messages()[0].findChildren(Thumbnail)
    qtbot.mouseClick(thumb, Qt.MouseButton.LeftButton)
    [viewer] = window.findChildren(ImageViewer)
    assert viewer.isVisible()
    assert viewer.ref is ref
    assert "ticket.png" in viewer.windowTitle()
    extract = next(b for b in viewer.findChildren(QPushButton) if b.text() == "Extract text")
    qtbot.mouseClick(extract, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert "B12" in ocr_messages(window)[0].text()
