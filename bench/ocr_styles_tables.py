"""The benchmark's chart and table styles (issue 20): bar and line charts with legends, ticks
and data labels; an invoice whose key-value block sits right above its items; a report table
without rules. Tables record their cells (the truth of the table-structure score).
"""

from __future__ import annotations

import random

from bench.ocr_samples import WORDS, Sample, sample, sentence
from bench.ocr_styles_documents import font
from desktop.core.ocr.rendered_pages import Face, Page, TruthCell, TruthTable

SERIES_COLOURS = [(44, 110, 190), (230, 140, 40)]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug"]


def _legend(page: Page, x: int, y: int, labels: list[str], face: Face) -> None:
    for label, colour in zip(labels, SERIES_COLOURS, strict=False):
        page.draw.rectangle((x, y + 2, x + 14, y + 16), fill=colour)
        page.decoration((x, y + 2, x + 14, y + 16))
        page.text(x + 22, y, label, face)
        x += 22 + round(face.getlength(label)) + 30
    page.reference.append(" ".join(labels))


def _axes(page: Page, rng: random.Random, top: int, bottom: int, left: int, right: int) -> int:
    """Gridlines and right-aligned y ticks from the highest value down; the value per pixel."""
    step = rng.choice([50, 100, 200])
    face = font("arial", 13)
    for number in range(5, -1, -1):
        y = bottom - (bottom - top) * number // 5
        page.draw.line([(left, y), (right, y)], fill=(225, 225, 225))
        label = str(step * number)
        page.text(left - 10 - round(face.getlength(label)), y - 8, label, face)
        page.reference.append(label)
    page.draw.line([(left, top), (left, bottom)], fill=(120, 120, 120))
    return step * 5


def _chart_page(rng: random.Random, series: list[str]) -> tuple[Page, Face]:
    page = Page(1000, 640)
    title = f"{rng.choice(WORDS).capitalize()} {rng.choice(['revenue', 'orders', 'visits'])}"
    page.lines(60, 24, [f"{title} by month"], font("arial-bold", 22))
    _legend(page, 60, 66, series, font("arial", 14))
    return page, font("arial", 12)


def make_bar_chart(rng: random.Random, name: str) -> Sample:
    """Grouped bars with a value above each; reading order: title, legend, y ticks top to
    bottom, data labels left to right, months."""
    page, small = _chart_page(rng, ["Online", "In store"])
    left, right, top, bottom = 120, 940, 130, 540
    high = _axes(page, rng, top, bottom, left, right)
    months = MONTHS[: rng.choice([5, 6])]
    slot = (right - left) // len(months)
    labels, x_labels = [], []
    for index, month in enumerate(months):
        x = left + index * slot + slot // 2 - 40
        for colour in SERIES_COLOURS:
            value = rng.randint(high // 10, high - high // 8)
            y = bottom - (bottom - top) * value // high
            page.draw.rectangle((x, y, x + 36, bottom), fill=colour)
            label = str(value)
            page.text(x + 18 - round(small.getlength(label)) / 2, y - 18, label, small)
            labels.append(label)
            x += 44
        x_labels.append(month)
        page.text(left + index * slot + slot // 2 - small.getlength(month) / 2, 552, month, small)
    page.reference += [*labels, " ".join(x_labels)]
    return sample(page, name, "bar chart")


def make_line_chart(rng: random.Random, name: str) -> Sample:
    """One series as a line with dot markers and a value above each point."""
    page, small = _chart_page(rng, ["Active users"])
    left, right, top, bottom = 120, 940, 130, 540
    high = _axes(page, rng, top, bottom, left, right)
    months = MONTHS[: rng.choice([6, 7, 8])]
    slot = (right - left) // len(months)
    points, labels = [], []
    for index in range(len(months)):
        value = rng.randint(high // 8, high - high // 8)
        points.append((left + index * slot + slot // 2, bottom - (bottom - top) * value // high))
        labels.append(str(value))
    page.draw.line(points, fill=SERIES_COLOURS[0], width=3)
    for index, ((x, y), label, month) in enumerate(zip(points, labels, months, strict=True)):
        page.draw.ellipse((x - 5, y - 5, x + 5, y + 5), fill=SERIES_COLOURS[0])
        page.decoration((x - 5, y - 5, x + 5, y + 5))
        # Above a point higher than its neighbours, below a lower one: clear of the line, as
        # charting tools place them.
        around = [points[i][1] for i in (index - 1, index + 1) if 0 <= i < len(points)]
        offset = -26 if y <= sum(around) / len(around) else 12
        page.text(x - small.getlength(label) / 2, y + offset, label, small)
        page.text(x - small.getlength(month) / 2, 552, month, small)
    page.reference += [*labels, " ".join(months)]
    return sample(page, name, "line chart")


def _table(
    page: Page, y: int, rows: list[list[str]], edges: list[tuple[str, int]], pitch: int
) -> int:
    """Rows at fixed edges: ("left", x) starts a cell at x, ("right", x) ends it there. The
    first row is the bold header. Records the truth table and the reference lines."""
    face, bold = font("arial", 14), font("arial-bold", 14)
    table = TruthTable()
    for number, row in enumerate(rows):
        cells = []
        for (align, x), text in zip(edges, row, strict=True):
            used = bold if number == 0 else face
            start = x if align == "left" else x - round(used.getlength(text))
            cells.append(TruthCell(text, page.text(start, y, text, used) if text else (0,) * 4))
        table.rows.append(cells)
        page.reference.append(" ".join(cell for cell in row if cell))
        y += pitch
    page.tables.append(table)
    return y


def make_invoice_details(rng: random.Random, name: str) -> Sample:
    """An invoice whose key-value block sits right above the items, with right-aligned
    numeric columns set close together."""
    page = Page(900, 720)
    face = font("arial", 14)
    y = page.lines(40, 28, ["Northwind Supplies Ltd"], font("arial-bold", 24)) + 2
    y = page.lines(40, y, [f"{rng.randint(10, 400)} Harbour Road, Bristol"], face) + 14
    y = page.lines(40, y, ["INVOICE"], font("arial-bold", 20)) + 8
    details = [
        ("Invoice No.", f"INV-{rng.randint(1000, 9999)}"),
        ("Issue date", f"{rng.randint(10, 28)}/0{rng.randint(1, 9)}/2025"),
        ("Due date", f"{rng.randint(10, 28)}/0{rng.randint(1, 9)}/2025"),
        ("Customer ID", f"C-{rng.randint(100, 999)}"),
    ]
    for label, value in details:
        page.text(40, y, label, face)
        page.text(180, y, value, face)
        page.reference.append(f"{label} {value}")
        y += 24
    rows = [["Description", "Qty", "Unit price", "Amount"]]
    total = 0
    for _ in range(rng.randint(4, 7)):
        quantity, price = rng.randint(1, 120), rng.randint(5, 2400)
        total += quantity * price
        rows.append(
            [
                f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} service",
                str(quantity),
                f"{price:,}.00",
                f"{quantity * price:,}.00",
            ]
        )
    # "Qty" ends 12 px before the widest "Unit price" cell starts: closer than the gap rule
    # alone splits. The totals below are rows of the same table (label under "Unit price").
    rows += [["", "", "Subtotal", f"{total:,}.00"], ["", "", "VAT 20%", f"{total // 5:,}.00"]]
    edges = [("left", 40), ("right", 560), ("right", 640), ("right", 780)]
    _table(page, y + 16, rows, edges, 26)
    return sample(page, name, "invoice, details block")


REGIONS = ["North", "South", "East", "West", "Central", "Overseas", "Online"]


def make_report_table(rng: random.Random, name: str) -> Sample:
    """A report table without rules: a left-aligned label column, right-aligned figures."""
    page = Page(1000, 560)
    title = f"Regional results, Q{rng.randint(1, 4)} 2025"
    y = page.lines(40, 28, [title], font("arial-bold", 22)) + 6
    y = page.lines(40, y, [sentence(rng, 10)], font("arial", 15)) + 12
    rows = [["Region", "Net revenue", "Change", "Share", "Customers"]]
    for region in rng.sample(REGIONS, rng.randint(5, 7)):
        rows.append(
            [
                region,
                f"{rng.randint(100, 9999):,}",
                f"{rng.choice(['+', '-'])}{rng.randint(0, 30)}.{rng.randint(0, 9)}%",
                f"{rng.randint(1, 40)}%",
                str(rng.randint(20, 4000)),
            ]
        )
    edges = [("left", 40), ("right", 340), ("right", 470), ("right", 580), ("right", 720)]
    y = _table(page, y, rows, edges, 28)
    page.lines(40, y + 20, ["Figures in thousands of euros."], font("arial", 13))
    return sample(page, name, "report table")


CHART_AND_TABLE_STYLES = [make_bar_chart, make_line_chart, make_invoice_details, make_report_table]
