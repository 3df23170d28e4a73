"""Every action that writes, copies or starts work says so where the eye is: read back from
the status bar as drawn (with room to show it whole), or from the control that was used."""

from __future__ import annotations

from gui_support import SIGNAL_TIMEOUT_MS, drop_on, file_mime, save_png, shown_message
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QToolButton

from desktop.gui.widgets.messages import OcrMessage


def ocr_messages(window) -> list[OcrMessage]:
    return [m for m in window.chat.messages() if isinstance(m, OcrMessage)]


def test_extract_save_and_copy_each_say_so_in_the_status_bar(qtbot, launch, tmp_path, monkeypatch):
    from ocr_pages import TABLE, ruled_table

    window = launch()
    window.resize(1366, 768)
    window.status.stats_label.setText("TTFT 0.52 s · 9.1 tok/s · 215 of 682 image tokens kept")
    image = save_png(ruled_table(TABLE), tmp_path / "stock.png")
    drop_on(window, file_mime(image))
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    chip = window.composer.chips()[0]
    next(a for a in chip.actions() if a.text() == "Extract text").trigger()
    assert shown_message(window.status) == "Extracting text from stock.png…"
    qtbot.waitUntil(lambda: len(ocr_messages(window)) == 1, timeout=SIGNAL_TIMEOUT_MS)
    message = ocr_messages(window)[0]

    target = tmp_path / "stock.txt"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    save = next(b for b in message.findChildren(QToolButton) if b.text() == "Save as…")
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: shown_message(window.status) == "Saved stock.txt.")
    assert target.exists()

    window.exporting.copy()
    assert shown_message(window.status) == "Copied the conversation as Markdown."

    table = next(b for b in message.findChildren(QToolButton) if b.text() == "Table")
    copy_tsv = next(a for a in table.menu().actions() if a.text() == "Copy table as TSV")
    copy_tsv.trigger()
    assert "Monitor\t3\t219.00" in QGuiApplication.clipboard().text()
    assert shown_message(window.status) == "Copied the table as tab-separated cells."


def test_a_message_has_room_in_a_small_window_too(qtbot, launch):
    window = launch()
    window.resize(640, 440)
    window.status.stats_label.setText("TTFT 0.52 s · 9.1 tok/s · 215 of 682 image tokens kept")
    window.status.showMessage("Saved invoice.txt.", 4000)
    assert shown_message(window.status) == "Saved invoice.txt."
