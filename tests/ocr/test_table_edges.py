"""Where an aligned table ends, on hand-made fragments (no models)."""

from __future__ import annotations

from test_ocr_layout import LINE, fragment

from desktop.core.ocr.layout import arrange
from desktop.core.ocr.models import TextFragment

PRICE_LIST = [
    ("Item no.", "Product", "Unit", "Price"),
    ("45677", "Cable tray", "set", "43.41"),
    ("83660", "Label printer", "pcs", "223.45"),
    ("84511", "Monitor arm", "pcs", "268.32"),
]
COLUMNS = (20, 130, 300, 380)


def price_list_fragments() -> list[TextFragment]:
    return [
        fragment(cell, left, number * LINE)
        for number, row in enumerate(PRICE_LIST)
        for left, cell in zip(COLUMNS, row, strict=True)
    ]


def test_a_footnote_reaching_across_a_column_gap_ends_the_table() -> None:
    # The detector boxed the footnote's last word apart ("Prices in CHF excl." "VAT."): a row
    # of two cells under the table, its first one across the gap between the first two
    # columns. Joined to the table, it merged those columns in every row.
    footnote = [
        fragment("Prices in CHF excl.", 20, 4 * LINE + 8),
        fragment("VAT.", 200, 4 * LINE + 8),
    ]
    layout = arrange(price_list_fragments() + footnote)
    assert [list(row) for row in layout.tables[0].rows] == [list(row) for row in PRICE_LIST]
    assert layout.lines[-1].text == "Prices in CHF excl. VAT."
    assert layout.lines[-1].kind != "table"


def test_a_last_row_inside_the_columns_stays_in_the_table() -> None:
    total = [fragment("Total", 20, 4 * LINE), fragment("535.18", 380, 4 * LINE)]
    table = arrange(price_list_fragments() + total).tables[0]
    assert [list(row) for row in table.rows][-1] == ["Total", "", "", "535.18"]
