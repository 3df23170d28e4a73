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


# --- issue 20: chat threads, charts, decorations, tables that keep their cells -------------

PAGE_WIDTH = 900  # the two-column page and the chat thread below share it


def test_two_columns_and_a_chat_thread_of_the_same_width_both_read_right() -> None:
    columns = [fragment("A Title Spanning Both Columns", 20, 0, 700)]
    for row, (left, right) in enumerate(zip(PROSE_LEFT, PROSE_RIGHT, strict=True)):
        columns += [
            fragment(left, 20, 40 + row * LINE, 400),
            fragment(right, PAGE_WIDTH - 420, 40 + row * LINE, 400),
        ]
    assert texts(columns) == ["A Title Spanning Both Columns", *PROSE_LEFT, *PROSE_RIGHT]

    # Bubbles alternate sides, each under its sender's line; the right column of bubbles has
    # a gutter beside the left one, as the two columns above have.
    thread = [
        ("left", ["Alex 9:41", "are we still on for the review today", "at three in room four"]),
        ("right", ["9:42", "yes and I will bring the printed report"]),
        ("left", ["Alex 9:44", "great please also bring the budget sheet"]),
        ("right", ["9:45", "will do see you there"]),
    ]
    fragments, y = [], 0
    for side, lines in thread:
        for text in lines:
            width = 9 * len(text)
            left = 20 if side == "left" else PAGE_WIDTH - 20 - width
            fragments.append(fragment(text, left, y, width))
            y += LINE
        y += 20  # the gap between bubbles
    assert texts(fragments) == [text for _, lines in thread for text in lines]


def test_decorations_are_not_text() -> None:
    fragments = [
        TextFragment.from_box("●", (20, 0, 34, 16)),  # a bullet read on its own
        fragment("first point of the slide", 40, 0),
        TextFragment.from_box("■Online", (20, 40, 93, 64)),  # a legend swatch joined to it
        TextFragment.from_box("0", (20, 80, 45, 100)),  # a checkbox outline, wider than tall
        fragment("Send me a summary", 60, 80),
        TextFragment.from_box("一", (300, 120, 360, 132)),  # a chart line
    ]
    layout = arrange(fragments)
    assert [line.text for line in layout.lines] == [
        "first point of the slide",
        "Online",
        "Send me a summary",
    ]
    assert layout.lines[1].box[0] > 20  # the box shrank off the swatch


def test_a_zero_in_a_table_stays_text() -> None:
    rows = [("Item", "Qty"), ("Pens", "0"), ("Paper", "5"), ("Ink", "12")]
    fragments = []
    for number, (item, quantity) in enumerate(rows):
        fragments.append(fragment(item, 20, number * LINE))
        fragments.append(
            TextFragment.from_box(quantity, (300, number * LINE, 313, number * LINE + 15))
        )
    assert [list(row) for row in arrange(fragments).tables[0].rows] == [list(r) for r in rows]


def chart_fragments() -> tuple[list[TextFragment], list[str]]:
    """A bar chart's text: title, legend, y ticks, data labels at their bars' heights, months."""
    fragments = [fragment("Orders by month", 60, 0, 200), fragment("Online", 80, 40)]
    ticks = ["400", "300", "200", "100", "0"]
    for number, tick in enumerate(ticks):
        fragments.append(fragment(tick, 110 - 9 * len(tick), 90 + number * 80))
    labels = [("212", 160, 250), ("388", 260, 110), ("95", 360, 330), ("301", 460, 180)]
    fragments += [fragment(text, x, y) for text, x, y in labels]
    months = ["Jan", "Feb", "Mar", "Apr"]
    fragments += [fragment(month, 160 + 100 * n, 430) for n, month in enumerate(months)]
    order = ["Orders by month", "Online", *ticks, *(t for t, _, _ in labels), " ".join(months)]
    return fragments, order


def test_chart_reads_title_legend_ticks_labels_then_axis() -> None:
    fragments, order = chart_fragments()
    assert texts(fragments) == order


def test_a_table_with_a_number_column_first_is_not_an_axis() -> None:
    rows = [("500", "North", "Open"), ("400", "South", "Closed"), ("300", "East", "Open")]
    fragments = [
        fragment(cell, x, number * LINE)
        for number, row in enumerate(rows)
        for x, cell in zip((20, 200, 400), row, strict=True)
    ]
    assert [list(r) for r in arrange(fragments).tables[0].rows] == [list(r) for r in rows]


def test_key_value_block_above_items_is_not_part_of_their_table() -> None:
    details = [
        ("Invoice No.", "INV-1042"),
        ("Issue date", "12/03/2025"),
        ("Due date", "11/04/2025"),
    ]
    fragments, y = [], 0
    for label, value in details:
        fragments += [fragment(label, 20, y), fragment(value, 160, y)]
        y += LINE
    items = [
        ("Description", "Qty", "Amount"),
        ("Consulting services for March", "12", "1,200.00"),
        ("Travel and accommodation", "1", "310.00"),
    ]
    y += 10
    for row in items:
        fragments += [fragment(row[0], 20, y), fragment(row[1], 400, y), fragment(row[2], 500, y)]
        y += LINE
    tables = [[list(row) for row in table.rows] for table in arrange(fragments).tables]
    assert tables == [[list(pair) for pair in details], [list(row) for row in items]]


def test_right_aligned_columns_split_at_their_edges_when_close() -> None:
    # "Qty" ends 6 px before "Unit price" starts: under the wide-gap rule (0.8 of the text
    # height) they would be one column; the right ends of the quantities line up there.
    rows = [("Qty", "Unit price"), ("12", "4.50"), ("140", "1,616.00"), ("7", "12.00")]
    fragments = []
    for number, (quantity, price) in enumerate(rows):
        fragments.append(fragment(quantity, 300 - 9 * len(quantity), number * LINE))
        fragments.append(fragment(price, 396 - 9 * len(price) if number else 306, number * LINE))
    fragments += [fragment(f"Item {n}", 20, n * LINE) for n in range(len(rows))]
    table = arrange(fragments).tables[0]
    assert [list(row[1:]) for row in table.rows] == [list(row) for row in rows]


def test_a_wide_header_cell_stays_over_its_column() -> None:
    # The bold header's box reaches 10 px into the next column's gap: the body's columns hold.
    body = [("Keyboard", "12", "49.90"), ("Monitor", "3", "219.00"), ("Cable", "40", "4.50")]
    fragments = [
        fragment("Product", 20, 0),
        fragment("Units", 250, 0, 90),  # reaches past the start of the Price column
        fragment("Price", 330, 0),
    ]
    for number, row in enumerate(body, start=1):
        fragments += [
            fragment(cell, x, number * LINE) for x, cell in zip((20, 250, 350), row, strict=True)
        ]
    table = arrange(fragments).tables[0]
    assert [list(row) for row in table.rows] == [["Product", "Units", "Price"], *map(list, body)]


def test_table_json_has_cells_with_boxes() -> None:
    rows = [
        ("Item", "Qty", "Price"),
        ("Pens", "10", "2.50"),
        ("Ink", "", "19.99"),
        ("Glue", "2", "1.20"),
    ]
    fragments = [
        fragment(cell, x, number * LINE)
        for number, row in enumerate(rows)
        for x, cell in zip((20, 300, 450), row, strict=True)
        if cell
    ]
    layout = arrange(fragments)
    result = OcrResult(lines=layout.lines, width=600, height=200, seconds=0.0, tables=layout.tables)
    [table] = result.to_dict()["tables"]
    assert [[cell["text"] for cell in row] for row in table["cells"]] == [list(r) for r in rows]
    assert table["cells"][1][1]["box"] == [300, LINE, 318, LINE + HEIGHT]
    assert table["cells"][2][1]["box"] is None  # an empty cell has no box


def test_markdown_table_round_trips_through_a_markdown_parser() -> None:
    from markdown_it import MarkdownIt

    rows = [("Name", "Note"), ("Ada", "a|b"), ("Alan", "back\\slash"), ("Grace", "x")]
    fragments = [
        fragment(cell, x, number * LINE)
        for number, row in enumerate(rows)
        for x, cell in zip((20, 300), row, strict=True)
    ]
    layout = arrange(fragments)
    markdown = OcrResult(layout.lines, 400, 200, 0.0, tables=layout.tables).markdown()
    assert parsed_table(MarkdownIt("commonmark").enable("table"), markdown) == [
        list(r) for r in rows
    ]


def parsed_table(parser, markdown: str) -> list[list[str]]:
    """The cells of the first table a Markdown parser finds, as text."""
    rows, row = [], None
    for token in parser.parse(markdown):
        if token.type == "tr_open":
            row = []
        elif token.type == "inline" and row is not None:
            row.append(token.content.replace("\\|", "|").replace("\\\\", "\\"))
        elif token.type == "tr_close":
            rows.append(row)
            row = None
    return rows


def test_slide_reads_bullets_then_the_caption_beside_them_then_the_footer() -> None:
    bullets = [
        "the first point of this slide is long enough",
        "and it wraps onto a second line below it",
        "the second point carries on with more words",
    ]
    fragments = [fragment(line, 100, 100 + row * LINE, 400) for row, line in enumerate(bullets)]
    fragments.append(fragment("Figure 2: sales by region", 700, 100 + 3 * LINE - 12))
    fragments += [fragment("Northwind Traders", 60, 400), fragment("7", 1180, 400)]
    assert texts(fragments) == [*bullets, "Figure 2: sales by region", "Northwind Traders 7"]


def test_a_date_level_with_a_heading_stays_in_its_row() -> None:
    fragments = [fragment("Weekly status report for the team", 20, 0, 300)]
    fragments.append(fragment("12/03/2025", 700, 0))
    fragments += [fragment(line, 20, 40 + row * LINE, 380) for row, line in enumerate(PROSE_LEFT)]
    assert texts(fragments) == ["Weekly status report for the team 12/03/2025", *PROSE_LEFT]
