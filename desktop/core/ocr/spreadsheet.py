"""Tables to spreadsheets: one .xlsx sheet per detected table, CSV, and TSV for the clipboard.

A cell becomes a number only when its text parses exactly and reads back the same: "42",
"-3", "12.50" (shown with its two decimals), and amounts with thousands separators decided per
column: "5,208.16" beside "523.20", "5.208,16" beside "523,20" (shown with separators in the
reader's locale); a column whose cells disagree keeps them as text, and so does "1,234" when
nothing in its column says which separator is the decimal one. Everything else stays text as
it was read: "0012" (a code, not twelve), "+5", "12 %", "$3" (cells.py). A cell that starts
with "=" stays text, never a formula; in CSV and TSV it gets a leading apostrophe
(cells.delimited). Empty cells stay empty.
A document without a table gives one sheet, "Text", with its lines.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

from openpyxl import Workbook
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.worksheet import Worksheet

from desktop.core.ocr.cells import column_numbers, delimited
from desktop.core.ocr.models import OcrDocument, OcrTable

_SHEET_NAME_LIMIT = 31  # Excel's limit
_SHEET_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")
# What XML 1.0 cannot hold (controls but tab and line breaks, U+FFFE/U+FFFF, lone surrogates):
# a workbook holding one does not open. Sheet names lose every control character.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_MAX_COLUMN_WIDTH = 60
MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
NO_TABLE_SHEET = "Text"


@dataclass(frozen=True)
class SheetTable:
    """A table with the name its sheet gets."""

    name: str
    rows: tuple[tuple[str, ...], ...]


Value = tuple[str | int | float | None, str | None]  # (value, number format)


def cell_value(text: str) -> Value:
    """(value, number format) of a cell alone in its column (cell_values)."""
    return cell_values([[text]])[0][0]


def cell_values(rows: Sequence[Sequence[str]]) -> list[list[Value]]:
    """(value, number format) of every cell: None for an empty cell, a number when the text
    is one in its column's convention (cells.column_numbers), else the text itself."""
    width = max((len(row) for row in rows), default=0)
    columns = [[row[c] if c < len(row) else "" for row in rows] for c in range(width)]
    numbers = [column_numbers(column) for column in columns]
    return [
        [
            (None, None) if not text else (numbers[c][r] or (text, None))
            for c, text in enumerate(row)
        ]
        for r, row in enumerate(rows)
    ]


def document_tables(documents: Sequence[OcrDocument]) -> list[SheetTable]:
    """Every table of the documents, named "Table 2", "Page 3 Table 1" (a PDF) or, with
    several documents, after the file: "scan.pdf p3 T1"."""
    tables = []
    for document in documents:
        many_pages = len(document.pages) > 1
        for page_number, page in enumerate(document.pages, start=1):
            for number, table in enumerate(page.tables, start=1):
                name = f"Table {number}"
                if many_pages:
                    name = f"Page {page.page or page_number} {name}"
                if len(documents) > 1:
                    page_part = f" p{page.page or page_number}" if many_pages else ""
                    name = f"{document.source_name}{page_part} T{number}"
                tables.append(SheetTable(name, table.rows))
    return tables


def workbook_bytes(documents: Sequence[OcrDocument]) -> bytes:
    """An .xlsx file: a sheet per table, or one "Text" sheet with the lines when none."""
    workbook = Workbook()
    first = workbook.active
    assert first is not None
    workbook.remove(first)
    used: set[str] = set()
    tables = document_tables(documents)
    if not tables:
        lines = [
            (line.text,) for document in documents for page in document.pages for line in page.lines
        ]
        tables = [SheetTable(NO_TABLE_SHEET, tuple(lines))]
    for table in tables:
        sheet = workbook.create_sheet(_sheet_name(table.name, used))
        _fill(sheet, table.rows)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def csv_text(tables: Sequence[OcrTable]) -> str:
    """The tables as CSV, a blank line between two tables; "" when there is none."""
    return "\n".join(table.csv() for table in tables)


def tsv_text(rows: Sequence[Sequence[str]]) -> str:
    """Tab-separated rows, quoted where a cell holds a tab, newline or quote: what a
    spreadsheet takes from the clipboard (no cell pastes as a formula)."""
    return delimited(rows, "excel-tab")


def _fill(sheet: Worksheet, rows: Sequence[Sequence[str]]) -> None:
    widths: dict[int, int] = {}
    values = cell_values([[_NOT_XML.sub("", text) for text in row] for row in rows])
    for row_number, row in enumerate(rows, start=1):
        for column, text in enumerate(row, start=1):
            value, number_format = values[row_number - 1][column - 1]
            widths[column] = max(widths.get(column, 0), len(text))
            if value is None:
                continue
            cell = sheet.cell(row=row_number, column=column, value=value)
            if isinstance(value, str):
                cell.data_type = "s"  # "=1+1" read off a screen is text, not a formula
            if number_format is not None:
                cell.number_format = number_format
    for column, width in widths.items():
        sheet.column_dimensions[get_column_letter(column)].width = min(width + 2, _MAX_COLUMN_WIDTH)


def _sheet_name(name: str, used: set[str]) -> str:
    base = _SHEET_FORBIDDEN.sub("_", _CONTROL.sub("", name)).strip("' ")[:_SHEET_NAME_LIMIT]
    base = base.strip("' ") or "Table"
    candidate, number = base, 1
    while candidate.casefold() in used:
        number += 1
        suffix = f" ({number})"
        candidate = base[: _SHEET_NAME_LIMIT - len(suffix)] + suffix
    used.add(candidate.casefold())
    return candidate
