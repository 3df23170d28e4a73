"""Reading order, paragraphs and tables on hand-made fragments: no models, so these are fast."""

from __future__ import annotations

import math

from desktop.core.ocr.layout import arrange
from desktop.core.ocr.models import OcrResult, TextFragment
from desktop.core.ocr.ruled_tables import TableGrid

LINE = 24  # pixels from one text row to the next
HEIGHT = 20  # height of a fragment box


def fragment(text: str, left: float, top: float, width: float | None = None) -> TextFragment:
    width = width if width is not None else 9 * len(text)
    return TextFragment.from_box(
        text, (round(left), round(top), round(left + width), round(top + HEIGHT))
    )


def texts(fragments: list[TextFragment], grids: list[TableGrid] | None = None) -> list[str]:
    return [line.text for line in arrange(fragments, grids or []).lines]


PROSE_LEFT = [
    "the left column of the article begins here",
    "and it carries on for several long lines",
    "each of them almost as wide as the column",
    "so it looks like ordinary wrapped prose",
]
PROSE_RIGHT = [
    "the right column continues the article",
    "with lines of a similar length and shape",
    "that must only be read after the left one",
    "has been read all the way to its bottom",
]


def test_two_prose_columns_read_left_then_right_even_when_rows_line_up() -> None:
    fragments = [fragment("A Title Spanning Both Columns", 20, 0, 700)]
    for row, (left, right) in enumerate(zip(PROSE_LEFT, PROSE_RIGHT, strict=True)):
        fragments += [
            fragment(left, 20, 40 + row * LINE, 380),
            fragment(right, 440, 40 + row * LINE, 380),
        ]
    layout = arrange(fragments)
    assert [line.text for line in layout.lines] == [
        "A Title Spanning Both Columns",
        *PROSE_LEFT,
        *PROSE_RIGHT,
    ]
    assert [line.column for line in layout.lines] == [0] + [0] * 4 + [1] * 4


def test_label_value_rows_are_read_row_by_row() -> None:
    pairs = [("Name:", "Jordan Lee"), ("Email:", "jordan@example.com"), ("Team:", "Finance")]
    fragments = [
        item
        for row, (label, value) in enumerate(pairs)
        for item in (fragment(label, 20, row * LINE), fragment(value, 300, row * LINE))
    ]
    layout = arrange(fragments)
    assert [line.text for line in layout.lines] == [
        "Name:\tJordan Lee",
        "Email:\tjordan@example.com",
        "Team:\tFinance",
    ]
    assert [list(row) for row in layout.tables[0].rows] == [list(pair) for pair in pairs]


def test_sidebar_is_read_before_the_content_beside_it() -> None:
    menu = ["Inbox", "Drafts", "Archive", "Settings"]
    fragments = [fragment(item, 10, 5 + row * 37) for row, item in enumerate(menu)]
    fragments += [
        fragment(line, 200, row * LINE, 420) for row, line in enumerate(PROSE_LEFT + PROSE_RIGHT)
    ]
    assert texts(fragments) == [*menu, *PROSE_LEFT, *PROSE_RIGHT]


def test_unequal_side_by_side_blocks_are_read_block_by_block() -> None:
    billing = ["Bill to:", "Acme Consulting", "12 Market Street", "Leeds LS1 5AB"]
    details = ["Invoice no: 1042", "Date: 12/03/2025", "Terms: 30 days"]
    fragments = [fragment(line, 20, row * LINE) for row, line in enumerate(billing)]
    fragments += [fragment(line, 600, row * LINE) for row, line in enumerate(details)]
    assert texts(fragments) == billing + details


def test_aligned_table_cells_and_markdown() -> None:
    rows = [
        ["Item", "Qty", "Price"],
        ["Pens", "10", "2.50"],
        ["Paper", "5", "4.00"],
        ["Ink", "2", "19.99"],
    ]
    fragments = [
        fragment(cell, x, 100 + number * LINE)
        for number, row in enumerate(rows)
        for x, cell in zip((20, 300, 450), row, strict=True)
    ]
    fragments.insert(0, fragment("Order summary for March", 20, 40))
    layout = arrange(fragments)
    result = OcrResult(lines=layout.lines, width=600, height=300, seconds=0.0, tables=layout.tables)
    assert result.markdown() == (
        "Order summary for March\n\n"
        "| Item | Qty | Price |\n|---|---|---|\n"
        "| Pens | 10 | 2.50 |\n| Paper | 5 | 4.00 |\n| Ink | 2 | 19.99 |"
    )


def test_ruled_grid_claims_the_fragments_inside_it() -> None:
    grid = TableGrid(xs=(10, 200, 300), ys=(50, 80, 110, 140))
    cells = [
        ("Name", 20, 55),
        ("Age", 210, 55),
        ("Ada", 20, 85),
        ("36", 210, 85),
        ("Alan", 20, 115),
        ("41", 210, 115),
    ]
    fragments = [fragment("Staff list", 10, 10)] + [fragment(text, x, y) for text, x, y in cells]
    layout = arrange(fragments, [grid])
    assert [line.text for line in layout.lines] == [
        "Staff list",
        "Name\tAge",
        "Ada\t36",
        "Alan\t41",
    ]
    assert layout.tables[0].ruled and layout.tables[0].box == (10, 50, 300, 140)


def test_frame_around_a_single_cell_is_not_a_table() -> None:
    grid = TableGrid(xs=(0, 400), ys=(0, 30, 60))  # a text box with a divider, one column
    layout = arrange([fragment("Search", 10, 5), fragment("Results", 10, 35)], [grid])
    assert layout.tables == [] and [line.text for line in layout.lines] == ["Search", "Results"]


def test_tilted_lines_still_group_into_rows() -> None:
    angle = math.radians(4)
    cos, sin = math.cos(angle), math.sin(angle)

    def tilted(text: str, left: float, top: float, width: float) -> TextFragment:
        corners = [
            (left, top),
            (left + width, top),
            (left + width, top + HEIGHT),
            (left, top + HEIGHT),
        ]
        return TextFragment(text, tuple((x * cos - y * sin, x * sin + y * cos) for x, y in corners))

    # Two fragments per row far apart: untilted, the right one sits ~30 px lower than the left.
    rows = [("first row left", "first row right"), ("second row left", "second row right")]
    fragments = [
        part
        for number, (a, b) in enumerate(rows)
        for part in (tilted(a, 20, 100 + number * 40, 150), tilted(b, 420, 100 + number * 40, 150))
    ]
    assert texts(fragments) == [
        "first row left first row right",
        "second row left second row right",
    ]


def test_headings_and_paragraph_numbers() -> None:
    heading = TextFragment.from_box("Release notes", (20, 0, 260, 34))
    body = [
        fragment("Version 2 adds dark mode", 20, 50),
        fragment("and faster search.", 20, 50 + LINE),
    ]
    later = fragment("Thanks to everyone who helped.", 20, 50 + 3 * LINE)
    layout = arrange([heading, *body, later])
    assert [(line.kind, line.paragraph) for line in layout.lines] == [
        ("heading", 0),
        ("text", 1),
        ("text", 1),
        ("text", 2),
    ]
    result = OcrResult(lines=layout.lines, width=400, height=200, seconds=0.0)
    assert result.markdown().startswith(
        "## Release notes\n\nVersion 2 adds dark mode\nand faster search.\n\n"
    )


def test_no_fragments_no_lines() -> None:
    layout = arrange([])
    assert layout.lines == [] and layout.tables == []
