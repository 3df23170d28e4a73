"""The extraction card's documents out (issue 28): Table ▾ (Save table as…, Copy table as TSV)
and Save as… a workbook or a searchable PDF, written on the storage thread; the menus list the
`OutputFormat`s (issue 37)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pypdfium2 as pdfium
from gui_support import SIGNAL_TIMEOUT_MS, drop_on, file_mime, save_png, text_image
from ocr_pages import TABLE, ruled_table
from openpyxl import load_workbook
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QToolButton

from desktop.core.history.ocr_text import OcrText
from desktop.core.ocr.formats import OutputFormat
from desktop.gui.flows import save_as
from desktop.gui.widgets.messages import OcrMessage


def extracted(qtbot, window, path) -> OcrMessage:
    drop_on(window, file_mime(path))
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    window.extraction.extract_all()

    def messages() -> list[OcrMessage]:
        return [m for m in window.chat.messages() if isinstance(m, OcrMessage)]

    qtbot.waitUntil(lambda: len(messages()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    return messages()[0]


def button(widget, text: str) -> QToolButton:
    return next(b for b in widget.findChildren(QToolButton) if b.text() == text)


def menu_action(widget, button_text: str, action_text: str):
    return next(a for a in button(widget, button_text).menu().actions() if a.text() == action_text)


def test_a_table_is_copied_as_tsv_and_saved_as_a_workbook(qtbot, launch, tmp_path, monkeypatch):
    window = launch()
    message = extracted(qtbot, window, save_png(ruled_table(TABLE), tmp_path / "stock.png"))

    menu_action(message, "Table", "Copy table as TSV").trigger()
    pasted = QApplication.clipboard().text()
    assert list(csv.reader(io.StringIO(pasted), dialect="excel-tab")) == TABLE

    target = tmp_path / "out" / "stock"  # no extension typed: the filter's
    target.parent.mkdir()
    label = "Excel workbook, a sheet per table (*.xlsx)"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), label))
    menu_action(message, "Table", "Save table as…").trigger()
    qtbot.waitUntil(lambda: not window.storage.busy)
    sheet = load_workbook(tmp_path / "out" / "stock.xlsx")["Table 1"]
    assert [cell.value for cell in sheet[3]] == ["Monitor", 3, 219]
    assert sheet["C3"].number_format == "0.00"  # shown as 219.00


def test_save_as_pdf_writes_a_searchable_pdf_of_the_image(qtbot, launch, tmp_path, monkeypatch):
    window = launch()
    message = extracted(
        qtbot, window, save_png(text_image("Order 5521 shipped"), tmp_path / "o.png")
    )
    assert not [b for b in message.findChildren(QToolButton) if b.text() == "Table"]
    target = tmp_path / "order.pdf"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), "Searchable PDF (*.pdf)")
    )
    qtbot.mouseClick(button(message, "Save as…"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.storage.busy)
    layer = pdfium.PdfDocument(str(target))[0].get_textpage().get_text_range()
    assert layer.split() == message.text().split()
    assert "5521" in layer

    no_table = tmp_path / "order.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(no_table), ""))
    qtbot.mouseClick(button(message, "Save as…"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.storage.busy)
    assert not no_table.exists()
    qtbot.waitUntil(lambda: "No table was found" in window.notice.text(), timeout=SIGNAL_TIMEOUT_MS)


def test_the_save_menus_offer_the_output_formats_and_take_the_chosen_one(monkeypatch, tmp_path):
    """Save as… lists every `OutputFormat` (plain text first), Save table as… the workbook then
    CSV; the chosen filter's format is the one saved when no extension is typed."""
    asked: list[tuple[str, str]] = []
    answer = {"name": "", "filter": ""}

    def dialog(_parent, _title, start, filters):
        asked.append((Path(start).name, filters))  # in the folder saved into last
        return answer["name"], answer["filter"]

    monkeypatch.setattr(QFileDialog, "getSaveFileName", dialog)
    result = OcrText("shot.png", "t", "m", "{}")
    assert save_as.ask_save_path(None, result) is None  # cancelled
    assert asked[-1] == ("shot.txt", ";;".join(fmt.label for fmt in OutputFormat))
    answer.update(name=str(tmp_path / "stock"), filter=OutputFormat.CSV.label)
    chosen = save_as.ask_save_path(None, result, formats=save_as.TABLE_FORMATS)
    assert asked[-1][1] == f"{OutputFormat.XLSX.label};;{OutputFormat.CSV.label}"
    assert chosen == (tmp_path / "stock.csv", OutputFormat.CSV)
    answer.update(name=str(tmp_path / "stock.XLSX"), filter=OutputFormat.CSV.label)
    chosen = save_as.ask_save_path(None, result, formats=save_as.TABLE_FORMATS)
    assert chosen == (tmp_path / "stock.XLSX", OutputFormat.XLSX)  # the extension typed wins
