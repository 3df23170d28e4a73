"""A window's panes split at the line drawn between them (desktop/core/ocr/panes.py): the
geometry on hand-made fragments and drawn lines, then a rendered window through the models."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from desktop.core.ocr import OcrEngine
from desktop.core.ocr.layout import arrange
from desktop.core.ocr.models import TextFragment
from desktop.core.ocr.panes import PaneRule, find_pane_rules
from desktop.core.ocr.rendered_pages import font
from desktop.core.ocr.ruled_tables import TableGrid

HEIGHT = 16


def fragment(text: str, left: float, top: float) -> TextFragment:
    return TextFragment.from_box(
        text, (round(left), round(top), round(left + 8 * len(text)), round(top + HEIGHT))
    )


# A sidebar (x < 240) beside a chat's content, its header level with the content's toolbar.
ROWS = {  # y: the (text, x) of each fragment on that row
    20: [("Chats", 12), ("New chat", 140), ("Invoice total and due date", 270),
         ("Capture", 640), ("Settings", 760)],
    60: [("Search chats", 20)], 100: [("Quarterly sales chart", 20)],
    136: [("Train timetable photo", 20)],
    160: [("What is the total due, and when is it due?", 400)],
    220: [("The invoice from Northwind Supplies is due on 13 April.", 300)],
    620: [("No chats yet.", 60)], 680: [("Ready", 12), ("CPU", 400)],
}  # fmt: skip
WINDOW = [fragment(text, x, y) for y, row in ROWS.items() for text, x in row]
SIDEBAR_RULE = PaneRule(x=250, top=0, bottom=668)


def test_a_sidebar_is_read_before_the_content_beside_it() -> None:
    lines = [line.text for line in arrange(WINDOW, [], [SIDEBAR_RULE]).lines]
    assert lines == [
        "Chats New chat",
        "Search chats",
        "Quarterly sales chart",
        "Train timetable photo",
        "No chats yet.",
        "Invoice total and due date Capture Settings",
        "What is the total due, and when is it due?",
        "The invoice from Northwind Supplies is due on 13 April.",
        "Ready CPU",  # the status bar, below the line, last
    ], lines
    # Without the line, the header and the toolbar read as one line, as they did.
    plain = [line.text for line in arrange(WINDOW, []).lines]
    assert plain[0] != "Chats New chat" and "Capture" in plain[0], plain


def test_a_line_that_text_runs_across_divides_nothing() -> None:
    crossing = [*WINDOW, fragment("a banner across the whole window width", 100, 300)]
    assert [line.text for line in arrange(crossing, [], [SIDEBAR_RULE]).lines] == [
        line.text for line in arrange(crossing, []).lines
    ]


def test_ruled_columns_whose_rows_line_up_are_a_table_not_panes() -> None:
    rows = [("Item", "Amount"), ("Paper", "12.50"), ("Toner", "89.00"), ("Staples", "3.20")]
    table = [
        piece
        for index, (name, amount) in enumerate(rows)
        for piece in (fragment(name, 20, 20 + 30 * index), fragment(amount, 300, 20 + 30 * index))
    ]
    rule = PaneRule(x=250, top=0, bottom=140)
    assert [line.text for line in arrange(table, [], [rule]).lines] == [
        line.text for line in arrange(table, []).lines
    ]


def test_an_axis_with_only_numbers_beside_it_is_not_a_pane() -> None:
    ticks = [fragment(str(value), 20, 20 + 40 * index) for index, value in enumerate((40, 30, 20))]
    labels = [fragment("North", 200, 50), fragment("South", 320, 90)]
    rule = PaneRule(x=100, top=10, bottom=140)
    assert [line.text for line in arrange(ticks + labels, [], [rule]).lines] == [
        line.text for line in arrange(ticks + labels, []).lines
    ]


def _canvas() -> np.ndarray:
    return np.full((400, 600), 250, np.uint8)


def test_a_thin_line_down_most_of_the_page_is_a_pane_rule() -> None:
    gray = _canvas()
    gray[0:380, 200] = 215  # a light grey 1-px line, as a sidebar's edge is drawn
    (rule,) = find_pane_rules(gray)
    assert (rule.x, rule.top) == (200, 0) and abs(rule.bottom - 380) <= 1, rule


def test_short_lines_and_scroll_bars_are_not_pane_rules() -> None:
    gray = _canvas()
    gray[50:150, 100] = 200  # a quarter of the page: a divider between two fields
    gray[20:380, 580:586] = 180  # a scroll bar's thumb, 6 px wide
    assert find_pane_rules(gray) == []


def test_the_rules_of_a_claimed_table_divide_nothing() -> None:
    # Its cells are claimed as one table, which runs across its column rules.
    grid = TableGrid(xs=(20, 240, 420), ys=(0, 30, 60, 90))
    cells = [("Item", "Amount"), ("Paper", "12.50"), ("Toner", "89.00")]
    table = [
        piece
        for row, (name, amount) in enumerate(cells)
        for piece in (fragment(name, 30, 6 + 30 * row), fragment(amount, 260, 6 + 30 * row))
    ]
    page = [*table, fragment("Notes on the order", 30, 120)]
    rule = PaneRule(x=240, top=0, bottom=90)
    assert [line.text for line in arrange(page, [grid], [rule]).lines] == [
        line.text for line in arrange(page, [grid]).lines
    ]


def _window() -> Image.Image:
    page = Image.new("RGB", (1000, 640), "white")
    draw = ImageDraw.Draw(page)
    face, bold = font("sans", 14, required=True), font("sans-bold", 15, required=True)
    draw.rectangle((0, 0, 249, 610), fill=(246, 246, 246))
    draw.line((250, 0, 250, 610), fill=(222, 222, 222))
    draw.line((0, 611, 999, 611), fill=(222, 222, 222))
    draw.text((14, 18), "Chats", font=bold, fill="black")
    draw.text((150, 18), "New chat", font=face, fill="black")
    for index, name in enumerate(["Quarterly sales chart", "Error dialog", "Train timetable"]):
        draw.text((20, 80 + 36 * index), name, font=face, fill="black")
    draw.text((272, 18), "Invoice total and due date", font=bold, fill="black")
    draw.text((700, 18), "Capture", font=face, fill="black")
    draw.text((820, 18), "Settings", font=face, fill="black")
    for index, line in enumerate(
        [
            "The invoice from Northwind Supplies is due on 13 April 2024.",
            "Its total is 320.04 GBP, of which 53.34 is VAT at twenty percent.",
        ]
    ):
        draw.text((300, 120 + 30 * index), line, font=face, fill="black")
    draw.text((14, 618), "Ready", font=face, fill="black")
    draw.text((120, 618), "CPU", font=face, fill="black")
    return page


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return OcrEngine()


def test_a_rendered_window_reads_its_sidebar_then_its_content(engine: OcrEngine) -> None:
    lines = engine.extract(_window()).text().splitlines()
    lines = [line.strip() for line in lines if line.strip()]
    assert lines[0] == "Chats New chat", lines
    toolbar = lines.index("Invoice total and due date Capture Settings")
    assert lines.index("Train timetable") < toolbar, lines
    assert lines[-1].split() == ["Ready", "CPU"], lines
