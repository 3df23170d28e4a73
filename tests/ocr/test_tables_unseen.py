"""Tables on layouts the layout rules were not written on (issue 28): pages from
devkit/table_pages.py read cell for cell, no drawn one-character cell lost, and the pieces
that make it so (the detector's strong cores, splits at column gaps, frames, empty cells)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from PIL import Image, ImageDraw

from desktop.core.ocr import OcrEngine
from desktop.core.ocr.empty_cells import empty_cell_regions, ink_box
from desktop.core.ocr.layout import arrange
from desktop.core.ocr.models import OcrTable, TextFragment
from desktop.core.ocr.ruled_tables import TableGrid, find_table_grids
from desktop.core.ocr.text_boxes import text_quads
from desktop.core.ocr.wide_gaps import Part, capital_height, letter_case, split_read
from devkit.table_pages import (
    KINDS,
    best_table,
    face,
    lone_characters_page,
    same_row,
)


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    ocr = OcrEngine()
    ocr.warm_up()
    return ocr


def table_rows(engine: OcrEngine, image: Image.Image) -> list[list[list[str]]]:
    return [[list(row) for row in table.rows] for table in engine.extract(image).tables]


# Pages of each kind, their seeds as the benchmark numbers them (bench/table_bench.py).
PAGES = [
    ("invoice", 1),  # narrow right-aligned Qty left of Description, key-value block above
    ("statement, dark", 1),  # a one-row key-value block right above the items
    ("statement, light", 0),
    ("timetable", 2),  # ruled; lone "x" notes and one-digit platforms
    ("spec sheet", 0),  # "232 x 275 x 31 mm", a lone "-" the detector does not see
    ("price list", 1),  # "1" and "set" 16 px apart
    ("dark grid", 1),  # faint row rules that made the detector's boxes two rows tall
    ("packing slip", 0),  # a framed key-value block beside the items
]


@pytest.mark.parametrize(("kind", "number"), PAGES)
def test_every_drawn_row_is_read_cell_for_cell(engine, kind, number) -> None:
    page = KINDS[kind](random.Random(f"28/{kind}/{number}"))
    found = table_rows(engine, page.image)
    for truth in page.tables:
        drawn = truth.texts()
        best = best_table(found, drawn)
        missed = [row for row in drawn if not any(same_row(r, row) for r in best)]
        assert missed == [], f"{kind}: drawn rows not read exactly, table found: {best}"
        assert same_row(best[0], drawn[0]), "the header is the table's first row"


def test_the_invoice_header_block_stays_out_of_the_items_table(engine) -> None:
    page = KINDS["invoice"](random.Random("28/invoice/1"))
    result = engine.extract(page.image)
    items = best_table([table.rows for table in result.tables], page.tables[0].texts())
    assert all("INVOICE" not in cell and "Anna Keller" not in cell for row in items for cell in row)
    assert "Ship to\nAnna Keller\nHofweg 7\n3011 Bern" in result.text()


LONE = ["1", "-", "0", "x", "%"]


@pytest.mark.parametrize(("family", "dark"), [("serif", False), ("noto", True), ("narrow", False)])
def test_no_drawn_single_character_cell_is_lost(engine, family, dark) -> None:
    page = lone_characters_page(family, dark)
    drawn = page.tables[0].texts()
    best = best_table(table_rows(engine, page.image), drawn)
    assert [row for row in drawn if not any(same_row(r, row) for r in best)] == []
    text = engine.extract(page.image).text()
    for row in drawn[1:]:
        assert "\t".join(row) in text  # in the text too, not only in the table


def test_a_weak_candidate_keeps_its_strong_cores() -> None:
    # A lone digit (strong) joined to the next column by a faint bridge: one candidate whose
    # mean falls under the box threshold; its strong parts are boxes of their own.
    probability = np.zeros((40, 120), np.float32)
    probability[10:30, 10:20] = 0.95  # the digit
    probability[17:23, 20:60] = 0.35  # the bridge
    probability[10:30, 60:80] = 0.95  # the next cell
    quads = text_quads(probability)
    lefts = sorted(round(float(quad[:, 0].min())) for quad in quads)
    assert len(quads) == 2 and lefts[0] < 15 and lefts[1] > 50


def test_a_dense_page_keeps_every_candidate_box() -> None:
    # A spreadsheet's ~1,900 cells on a 3840 px screen: PaddleOCR's cap of 1,000 candidates
    # lost the top of the page (OpenCV lists contours from the bottom up).
    probability = np.zeros((60 * 24, 40 * 48), np.float32)
    for row in range(60):
        for column in range(40):
            probability[row * 24 + 6 : row * 24 + 18, column * 48 + 6 : column * 48 + 40] = 0.9
    tops = sorted(round(float(quad[:, 1].min())) for quad in text_quads(probability))
    assert len(tops) == 2400 and tops[0] < 6


def crop_with(parts: list[tuple[int, str]], width: int = 260) -> np.ndarray:
    image = Image.new("RGB", (width, 24), "white")
    draw = ImageDraw.Draw(image)
    for x, text in parts:
        draw.text((x, 4), text, font=face("narrow", 15), fill="black")
    return np.array(image)[:, :, ::-1].copy()


def columns_of(parts: list[tuple[int, str]]) -> np.ndarray:
    """The crop column of each character, as the recognizer's CTC steps give them."""
    used = face("narrow", 15)
    return np.array(
        [x + used.getlength(text[:i]) + 3 for x, text in parts for i in range(len(text))],
        dtype=np.float32,
    )


def test_a_read_across_a_column_gap_is_split_there() -> None:
    crop = crop_with([(6, "1"), (30, "Desk lamp LED")])
    text = "1 Desk lamp LED"
    xs = np.array([8, 18, *columns_of([(30, "Desk lamp LED")])], np.float32)
    parts = split_read(crop, text, xs)
    assert [part.text for part in parts] == ["1", "Desk lamp LED"]
    assert parts[0].right < parts[1].left  # the gap stays between their boxes


def test_words_a_space_apart_are_not_split() -> None:
    crop = crop_with([(6, "Desk lamp LED")])
    parts = split_read(crop, "Desk lamp LED", columns_of([(6, "Desk lamp LED")]))
    assert [part.text for part in parts] == ["Desk lamp LED"]


def test_a_lone_x_takes_its_case_from_its_height() -> None:
    crops = [crop_with([(6, text)], 60) for text in ("12", "x", "X", "Bern")]
    capital = capital_height(["12", "X", "x", "Bern"], crops)
    assert capital is not None
    cases = [letter_case(Part(text, 0, 60, 0, 24), crop, capital) for text, crop in
             zip(["12", "X", "x", "Bern"], crops, strict=True)]  # fmt: skip
    assert cases == ["12", "x", "X", "Bern"]


def test_a_framed_block_beside_items_is_read_as_a_block() -> None:
    items, y = [], 100
    for sku, qty, name in [("SKU", "Qty", "Item"), ("SK-1", "4", "Laptop stand"),
                           ("SK-2", "20", "Monitor arm"), ("SK-3", "1", "Cable tray")]:  # fmt: skip
        items += [TextFragment.from_box(sku, (40, y, 100, y + 20)),
                  TextFragment.from_box(qty, (160, y, 180, y + 20)),
                  TextFragment.from_box(name, (200, y, 320, y + 20))]  # fmt: skip
        y += 30
    framed, y = [], 108
    for label, value in [("Order", "SO-1"), ("Carrier", "DHL"), ("Boxes", "2")]:
        framed += [TextFragment.from_box(label, (620, y, 680, y + 18)),
                   TextFragment.from_box(value, (710, y, 760, y + 18))]  # fmt: skip
        y += 22
    frame = TableGrid(xs=(600, 860), ys=(90, 200))
    layout = arrange(items + framed, [frame])
    assert [list(row) for row in layout.tables[0].rows] == [
        ["SKU", "Qty", "Item"], ["SK-1", "4", "Laptop stand"],
        ["SK-2", "20", "Monitor arm"], ["SK-3", "1", "Cable tray"],
    ]  # fmt: skip
    assert all("Order" not in line.text for line in layout.lines if line.table == 0)


def test_an_outline_is_a_frame_and_a_shaded_band_is_not() -> None:
    image = Image.new("L", (400, 300), 255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 20, 300, 120), outline=120)
    draw.rectangle((20, 180, 380, 210), fill=225)
    grids = find_table_grids(np.array(image))
    assert [grid.box for grid in grids if grid.is_frame] == [(20, 20, 300, 120)]


def test_ink_in_an_empty_aligned_cell_is_found() -> None:
    table = OcrTable(
        rows=(("Feature", "Basic"), ("Fan", ""), ("Weight", "1.2 kg")),
        box=(10, 10, 200, 90),
        ruled=False,
        cell_boxes=(
            ((10, 10, 70, 30), (120, 10, 170, 30)),
            ((10, 40, 40, 60), None),
            ((10, 70, 70, 90), (120, 70, 175, 90)),
        ),
    )
    assert empty_cell_regions(table) == [(120, 40, 175, 60)]
    gray = np.full((100, 220), 250, np.uint8)
    assert ink_box(gray, (120, 40, 175, 60)) is None
    gray[49:51, 125:131] = 30  # a dash
    assert ink_box(gray, (120, 40, 175, 60)) == (125, 49, 131, 51)
