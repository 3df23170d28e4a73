"""A spreadsheet's row numbers and column names, drawn outside its ruled grid, read as the
grid's first column and first row (sheet_headers.py); column names in sequence are read as
the sequence gives them."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw
from test_ocr_layout import fragment

from desktop.core.ocr import OcrEngine
from desktop.core.ocr.layout import arrange
from desktop.core.ocr.layout_items import deskewed
from desktop.core.ocr.models import TextFragment
from desktop.core.ocr.rendered_pages import font
from desktop.core.ocr.ruled_tables import TableGrid
from desktop.core.ocr.sheet_headers import column_index, column_name, names_in_sequence

CELLS = [
    ["Item", "Qty", "Price"],
    ["Lamp", "4", "12.50"],
    ["Chair", "2", "80.00"],
    ["Desk", "1", "240.00"],
]
ROW = 30  # px between the grid's row rules
GUTTER = 40  # the row numbers' band, left of the grid's first rule
TOP = 40  # the grid's first rule; the column names' band is above it
XS = (GUTTER, 160, 240, 340)


def sheet_fragments(cells: list[list[str]], numbered: int) -> list[TextFragment]:
    """A sheet as the detector boxes it: column names above the grid, a row number left of
    each of its `numbered` rows (also of the empty rows below the data), the cells in it."""
    names = [
        fragment(name, left + 30, TOP - ROW + 5, 12)
        for name, left in zip("ABC", XS[:3], strict=True)
    ]
    numbers = [
        fragment(str(row + 1), 12, TOP + row * ROW + 5, 9 * len(str(row + 1)))
        for row in range(numbered)
    ]
    texts = [
        fragment(text, left + 6, TOP + row * ROW + 5)
        for row, row_texts in enumerate(cells)
        for text, left in zip(row_texts, XS, strict=False)
    ]
    return [fragment("Orders.xlsx", 10, 0), *names, *numbers, *texts]


def sheet_grid(rows: int) -> TableGrid:
    return TableGrid(xs=XS, ys=tuple(TOP + row * ROW for row in range(rows + 1)))


def test_row_numbers_and_column_names_beside_a_grid_are_its_first_column_and_row() -> None:
    layout = arrange(sheet_fragments(CELLS, len(CELLS)), [sheet_grid(len(CELLS))])
    assert [line.text for line in layout.lines] == [
        "Orders.xlsx",
        "\tA\tB\tC",
        "1\tItem\tQty\tPrice",
        "2\tLamp\t4\t12.50",
        "3\tChair\t2\t80.00",
        "4\tDesk\t1\t240.00",
    ]
    [table] = layout.tables
    assert table.box == (0, 10, 340, 160)


def test_a_sheets_empty_rows_keep_their_numbers_and_the_grid_stays_a_table() -> None:
    # Two rows of data in six numbered rows: rows of a number alone do not make the grid
    # "mostly empty", which would have left it unclaimed.
    layout = arrange(sheet_fragments(CELLS[:2], 6), [sheet_grid(6)])
    assert [list(row) for row in layout.tables[0].rows] == [
        ["", "A", "B", "C"],
        ["1", *CELLS[0]],
        ["2", *CELLS[1]],
        *[[str(number), "", "", ""] for number in range(3, 7)],
    ]


def test_a_title_across_the_columns_and_a_note_beside_two_rows_are_not_headers() -> None:
    cells = [f for f in sheet_fragments(CELLS, 0) if f.box[0] >= GUTTER and f.box[1] >= TOP]
    title = fragment("Orders by region", 60, TOP - ROW + 5, 200)
    note = [fragment("new", 0, TOP + ROW + 5, 27), fragment("old", 0, TOP + 2 * ROW + 5, 27)]
    layout = arrange([title, *cells, *note], [sheet_grid(len(CELLS))])
    assert [list(row) for row in layout.tables[0].rows] == CELLS
    assert "Orders by region" in [line.text for line in layout.lines]


def test_the_last_row_of_a_table_above_is_not_the_column_headers_of_the_one_below() -> None:
    below = TOP + len(CELLS) * ROW + 15  # the second table's top rule, 15 px under the first
    fragments = sheet_fragments(CELLS, 0)[4:] + [
        fragment(text, left + 6, below + row * ROW + 5)
        for row, texts in enumerate(CELLS)
        for text, left in zip(texts, XS, strict=False)
    ]
    second = TableGrid(xs=XS, ys=tuple(below + row * ROW for row in range(len(CELLS) + 1)))
    layout = arrange(fragments, [second, sheet_grid(len(CELLS))])
    assert [[list(row) for row in table.rows] for table in layout.tables] == [CELLS, CELLS]


def test_names_misread_in_a_line_of_column_names_take_the_sequences_names() -> None:
    line = "A B C D E F G H 1 1 K L M N 0 P Q R S T U v W X Y Z AA AB A1 AD"
    items = [deskewed(fragment(t, 70 * place, 10, 12), 0.0) for place, t in enumerate(line.split())]
    read = [item.text for item in names_in_sequence(items)]
    assert read == [column_name(index) for index in range(30)]
    assert column_index("AD") == 29 and column_name(52) == "BA"


@pytest.mark.parametrize(
    "line",
    ["I O U 1 0 U", "ID SKU QTY EUR USD 1", "Q1 Q2 Q3 Q4 Total"],
    ids=["few names", "abbreviations", "quarters"],
)
def test_other_lines_keep_their_text(line: str) -> None:
    items = [deskewed(fragment(t, 70 * place, 10), 0.0) for place, t in enumerate(line.split())]
    assert [item.text for item in names_in_sequence(items)] == line.split()


def draw_sheet(rows: list[list[str]], numbered: int) -> Image.Image:
    """A light spreadsheet: column names in a shaded band above the grid, row numbers in a
    shaded gutter left of it, no rule at the screen's edge or above the names."""
    face, bold = font("sans", 13), font("sans-bold", 13)
    widths, gutter, top, height = [130, 70, 90, 90, 90], 40, 50, 22
    image = Image.new("RGB", (gutter + sum(widths) + 20, top + height * (numbered + 1) + 30))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, *image.size), fill="white")
    draw.text((10, 12), "Sheet1", font=face, fill=(20, 20, 20))
    band = top + height
    draw.rectangle((0, top, image.width, band), fill=(232, 232, 232))
    draw.rectangle((0, top, gutter, band + height * numbered), fill=(232, 232, 232))
    lefts = [gutter + sum(widths[:column]) for column in range(len(widths))]
    for column, (left, width) in enumerate(zip(lefts, widths, strict=True)):
        name = column_name(column)
        draw.text((left + (width - face.getlength(name)) / 2, top + 4), name, font=face,
                  fill=(90, 90, 90))  # fmt: skip
    for row in range(numbered):
        y = band + row * height
        label = str(row + 1)
        draw.text(((gutter - face.getlength(label)) / 2, y + 4), label, font=face,
                  fill=(90, 90, 90))  # fmt: skip
        for text, left in zip(rows[row] if row < len(rows) else [], lefts, strict=False):
            draw.text((left + 6, y + 4), text, font=bold if row == 0 else face, fill=(20, 20, 20))
    bottom = band + height * numbered
    for y in range(band, bottom + 1, height):
        draw.line([(0, y), (image.width, y)], fill=(212, 212, 212))
    for left in [*lefts, lefts[-1] + widths[-1]]:
        draw.line([(left, top), (left, bottom)], fill=(212, 212, 212))
    return image


def test_a_drawn_sheet_reads_each_row_number_at_the_start_of_its_row() -> None:
    rows = [
        ["Customer", "Region", "Qty", "Total", "Status"],
        ["Acme Widgets", "North", "12", "1,250.00", "Paid"],
        ["Globex GmbH", "West", "7", "318.40", "Open"],
        ["Initech Ltd", "South", "30", "4,020.75", "Shipped"],
        ["Hooli Cloud", "East", "3", "96.00", "Overdue"],
    ]
    image = draw_sheet(rows, numbered=8)
    result = OcrEngine().extract(image)
    lines = [" ".join(line.split()) for line in result.text().splitlines() if line.strip()]
    assert lines == [
        "Sheet1",
        "A B C D E",
        *(f"{number} {' '.join(row)}" for number, row in enumerate(rows, start=1)),
        "6",
        "7",
        "8",
    ]
    [table] = result.tables
    assert [row[0] for row in table.rows] == ["", *map(str, range(1, 9))]
    assert list(table.rows[0]) == ["", "A", "B", "C", "D", "E"]
