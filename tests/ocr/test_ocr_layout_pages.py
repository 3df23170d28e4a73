"""Reading order and tables on the kinds of page of issue 36 (terminal UIs, e-mail pagers, an
invoice's key-value block), on hand-made fragments: no models, so these are fast."""

from __future__ import annotations

import io

import pytest
from openpyxl import load_workbook

from desktop.core.ocr.layout import arrange
from desktop.core.ocr.models import OcrDocument, OcrResult, TextFragment
from desktop.core.ocr.ruled_tables import TableGrid
from desktop.core.ocr.spreadsheet import csv_text, workbook_bytes

LINE = 24  # pixels from one text row to the next


def fragment(text: str, left: float, top: float, width: float | None = None) -> TextFragment:
    width = width if width is not None else 9 * len(text)
    return TextFragment.from_box(text, (round(left), round(top), round(left + width), top + 20))


def texts(fragments: list[TextFragment], grids: list[TableGrid] | None = None) -> list[str]:
    return [line.text for line in arrange(fragments, grids or []).lines]


def test_a_terminal_uis_key_bar_is_read_after_the_framed_panes_above_it() -> None:
    """A menu line, two framed panes, a key bar at the bottom (issue 36): the key bar was read
    right after the menu line, before the panes."""
    menu = [fragment(word, 10 + 70 * n, 5, 50) for n, word in enumerate(["File", "Edit", "View"])]
    tasks = [
        fragment(f"{number} task number {number}", 20, 50 + LINE * row, 300)
        for row, number in enumerate([101, 102, 103])
    ]
    details = [fragment("Details of the task", 20, 170), fragment("its long text", 20, 194)]
    keys = [fragment(k, 10 + 110 * n, 260, 90) for n, k in enumerate(["F1 Help", "F2 New"])]
    frames = [TableGrid(xs=(6, 600), ys=(40, 130)), TableGrid(xs=(6, 600), ys=(160, 230))]
    lines = texts(menu + tasks + details + keys, frames)
    assert lines[-1].split() == ["F1", "Help", "F2", "New"]
    assert lines.index("Details of the task") > lines.index("103 task number 103")


def test_a_mail_header_block_is_read_line_by_line_not_as_a_table() -> None:
    """A pager's header block with its values aligned (mutt pads the names): "From:  Alex", not
    the tab-separated cells of a two-column table; a form's label-value rows stay a table."""
    pairs = [("Date:", "Mon, 22 Oct 2025 14:22"), ("From:", "Mei Lin <mei@example.com>")]
    pairs += [("To:", "Tomas Novak <tomas@example.org>"), ("Subject:", "Re: the budget")]
    fragments = [
        item
        for row, (name, value) in enumerate(pairs)
        for item in (fragment(name, 8, row * LINE), fragment(value, 84, row * LINE))
    ]
    layout = arrange(fragments)
    assert [line.text for line in layout.lines] == [f"{name} {value}" for name, value in pairs]
    assert layout.tables == []
    form = [("Name:", "Jordan Lee"), ("Email:", "jordan@example.com"), ("Team:", "Finance")]
    fragments = [
        item
        for row, (label, value) in enumerate(form)
        for item in (fragment(label, 8, row * LINE), fragment(value, 84, row * LINE))
    ]
    assert [list(row) for row in arrange(fragments).tables[0].rows] == [list(p) for p in form]


def test_a_pagers_key_bar_and_headers_are_lines_of_text() -> None:
    """The key bar aligned over a header block whose date is read in two pieces (issue 36):
    each row is one line of text, no cell of a table."""
    keys = ["q:Exit", "-:PrevPg", "<Space>:NextPg", "d:Del"]
    fragments = [fragment(key, 8 + 84 * n, 0, 60) for n, key in enumerate(keys)]
    fragments += [fragment("Date:", 8, LINE), fragment("Mon,", 92, LINE, 40)]
    fragments += [fragment("22 Oct 2025 14:22", 140, LINE)]
    fragments += [
        fragment("From:", 8, 2 * LINE),
        fragment("Mei Lin <mei@example.com>", 92, 2 * LINE),
    ]
    fragments += [fragment("To:", 8, 3 * LINE), fragment("Tom <tom@example.org>", 92, 3 * LINE)]
    layout = arrange(fragments)
    assert layout.lines[0].text.split() == keys
    assert not any("\t" in line.text for line in layout.lines)
    assert [" ".join(line.text.split()) for line in layout.lines[1:]] == [
        "Date: Mon, 22 Oct 2025 14:22",
        "From: Mei Lin <mei@example.com>",
        "To: Tom <tom@example.org>",
    ]
    assert layout.tables == []


@pytest.mark.parametrize(
    "items",
    [
        [("Description", "Amount"), ("Consulting services", "1,200.00"), ("Travel", "310.00")],
        [
            ("Description", "Qty", "Amount"),
            ("Consulting services", "", "1,200.00"),  # an empty cell: two cells in this row
            ("Travel", "1", "310.00"),
            ("Hosting", "2", "99.00"),
        ],
    ],
)
def test_an_invoices_key_value_block_stays_out_of_the_items_under_it(
    items: list[tuple[str, ...]],
) -> None:
    """Items whose descriptions reach over the block's values (issue 36): the block was their
    table's first rows, its values an empty column, "Invoice No." the header; the .xlsx and the
    CSV copied it."""
    details = [("Invoice No.", "INV-1042"), ("Date", "12/03/2025"), ("Due", "11/04/2025")]
    fragments = [
        item
        for row, (label, value) in enumerate(details)
        for item in (fragment(label, 20, row * LINE), fragment(value, 160, row * LINE))
    ]
    xs = [20, 400, 500] if len(items[0]) == 3 else [20, 500]
    for number, row in enumerate(items):
        top = (len(details) + number) * LINE + 10
        fragments += [fragment(cell, x, top) for cell, x in zip(row, xs, strict=True) if cell]
    layout = arrange(fragments)
    assert [[list(r) for r in table.rows] for table in layout.tables] == [
        [list(pair) for pair in details],
        [list(row) for row in items],
    ]
    page = OcrResult(layout.lines, 600, 200, 0.0, tables=layout.tables)
    book = load_workbook(io.BytesIO(workbook_bytes([OcrDocument("invoice.png", [page])])))
    sheet = book["Table 2"]
    assert [cell.value for cell in sheet[1]] == list(items[0])
    assert sheet.max_column == len(items[0])
    assert sheet["B2" if len(items[0]) == 2 else "C2"].value == 1200.0
    assert csv_text(layout.tables[1:]).splitlines()[0] == ",".join(items[0])


# An invoice's header as the detector boxed it (an invoice drawn at 60 %): the address lines
# on the left at one pitch, the key-value block on the right at another; "8002 Zurich" is
# boxed tall enough to reach both "Date" and "Due".
INVOICE_HEADER = [
    ("Invoice no.", (359, 39, 409, 54)), ("INV-4471", (419, 40, 457, 52)),
    ("Seestrasse 41", (24, 46, 91, 57)),
    ("Date", (359, 53, 381, 63)), ("2024-09-17", (419, 51, 466, 64)),
    ("8002 Zurich", (22, 57, 85, 74)),
    ("Due", (359, 64, 378, 73)), ("2024-10-17", (418, 61, 466, 76)),
    ("VAT CHE-123.456.789", (23, 73, 135, 88)),
    ("billing@brightline.ch", (23, 87, 128, 102)),
]  # fmt: skip


def test_a_key_value_row_is_not_joined_to_the_one_under_it() -> None:
    """Issue 55: a row's extent grows with each item it takes, so "8002 Zurich" beside "Date"
    stretched the row down to "Due": one row, "Due Date | 2024-09-17 2024-10-17" (the labels
    reversed, ordered by their left edges). Two lines one under the other are two rows."""
    layout = arrange([TextFragment.from_box(text, box) for text, box in INVOICE_HEADER])
    rows = [list(row) for table in layout.tables for row in table.rows]
    cells = [cell for row in rows for cell in row] + [line.text for line in layout.lines]
    assert not any("Date" in cell and "Due" in cell for cell in cells)
    assert not any("2024-09-17" in cell and "2024-10-17" in cell for cell in cells)
    [date] = [row for row in rows if "Date" in row]
    [due] = [row for row in rows if "Due" in row]
    assert date[date.index("Date") + 1] == "2024-09-17"
    assert due[due.index("Due") + 1] == "2024-10-17"
    assert rows.index(date) < rows.index(due)
