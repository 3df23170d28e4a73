"""Table-heavy pages drawn independently of the OCR benchmark's renderings (issue 28): other
fonts (Liberation Sans Narrow, DejaVu Serif and Mono, Noto Sans, DejaVu Condensed), narrow
right-aligned columns beside left-aligned ones, empty cells, zebra rows in light and dark,
rules under the header only, full grids, key-value blocks above and beside item tables.

Each page records its tables' true cells (header row first) for the tests and
bench/table_bench.py.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from PIL import Image, ImageFont

from desktop.core.ocr.rendered_pages import Colour, Face, Page, TruthCell, TruthTable

FONT_ROOT = Path("/usr/share/fonts")
# (regular, bold) font files by family.
FAMILIES = {
    "narrow": ("liberation/LiberationSansNarrow-Regular", "liberation/LiberationSansNarrow-Bold"),
    "serif": ("dejavu/DejaVuSerif", "dejavu/DejaVuSerif-Bold"),
    "mono": ("dejavu/DejaVuSansMono", "dejavu/DejaVuSansMono-Bold"),
    "liberation-mono": ("liberation/LiberationMono-Regular", "liberation/LiberationMono-Bold"),
    "condensed": ("dejavu/DejaVuSansCondensed", "dejavu/DejaVuSansCondensed-Bold"),
    "noto": ("noto/NotoSansCJK-Regular", "noto/NotoSansCJK-Bold"),
}
Rows = list[list[str]]
Align = Literal["left", "right"]
Rules = Literal["none", "header", "grid", "rows"]


def face(family: str, size: int, *, bold: bool = False) -> Face:
    """A face of FAMILIES (Pillow's own where the file is not installed)."""
    stem = FAMILIES[family][bold]
    for path in (FONT_ROOT / "truetype" / f"{stem}.ttf", FONT_ROOT / "opentype" / f"{stem}.ttc"):
        if path.exists():
            return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


@dataclass(frozen=True)
class Column:
    title: str
    width: int
    align: Align = "left"


@dataclass(frozen=True)
class Look:
    """How a table is drawn."""

    family: str
    size: int = 15
    row_height: int = 30
    ink: Colour = (25, 25, 25)
    header_ink: Colour | None = None
    header_fill: Colour | None = None
    zebra: Colour | None = None
    rules: Rules = "none"
    rule: Colour = (150, 150, 150)
    pad: int = 8


@dataclass
class TablePage:
    """A rendered page, its kind and the true cells of each of its tables."""

    name: str
    kind: str
    image: Image.Image
    tables: list[list[list[str]]]
    reference: str


def draw_table(page: Page, x: int, y: int, columns: list[Column], body, look: Look) -> int:
    """Header and body rows, recorded as a truth table; the y below the table."""
    regular, bold = face(look.family, look.size), face(look.family, look.size, bold=True)
    rows = [[column.title for column in columns], *body]
    width, height = sum(c.width for c in columns), look.row_height
    truth = TruthTable()
    for number, row in enumerate(rows):
        top = y + number * height
        fill = look.header_fill if number == 0 else (look.zebra if number % 2 == 0 else None)
        if fill is not None:
            page.draw.rectangle((x, top, x + width - 1, top + height - 1), fill=fill)
        ink = (look.header_ink or look.ink) if number == 0 else look.ink
        cells, left = [], x
        for column, text in zip(columns, row, strict=True):
            box = (left, top, left + column.width, top + height)
            if text:
                used = bold if number == 0 else regular
                length = used.getlength(text)
                tx = left + look.pad if column.align == "left" else box[2] - look.pad - length
                box = page.text(tx, top + (height - look.size) / 2 - 2, text, used, fill=ink)
            cells.append(TruthCell(text, box))
            left += column.width
        truth.rows.append(cells)
        page.reference.append(" ".join(text for text in row if text))
    _rules(page, x, y, columns, len(rows), look)
    page.tables.append(truth)
    return y + len(rows) * height


def _rules(page: Page, x: int, y: int, columns: list[Column], count: int, look: Look) -> None:
    width, height = sum(c.width for c in columns), look.row_height
    if look.rules == "header":
        page.draw.line([(x, y + height), (x + width, y + height)], fill=look.rule, width=2)
    if look.rules in ("grid", "rows"):
        for number in range(count + 1):
            yy = y + number * height
            page.draw.line([(x, yy), (x + width, yy)], fill=look.rule)
    if look.rules == "grid":
        left = x
        for column in [Column("", 0), *columns]:
            left += column.width
            page.draw.line([(left, y), (left, y + count * height)], fill=look.rule)


def key_values(page: Page, x: int, y: int, pairs, family: str, size: int, *, gap: int) -> int:
    """Label and value pairs, one pair a line; the y below."""
    regular, bold = face(family, size), face(family, size, bold=True)
    for label, value in pairs:
        page.text(x, y, label, bold)
        page.text(x + gap, y, value, regular)
        page.reference.append(f"{label} {value}")
        y += round(size * 1.6)
    return y


def text_lines(page: Page, x: int, y: int, lines: list[str], used: Face, fill=None) -> int:
    for line in lines:
        page.text(x, y, line, used, fill=fill)
        page.reference.append(line)
        y += round(used.size * 1.5)
    return y


PRODUCTS = [
    "Mechanical keyboard", "Desk lamp LED", "USB-C hub 7-port", "Monitor arm", "Webcam 1080p",
    "Laptop stand", "Wireless mouse", "Cable tray", "Headset with mic", "Docking station",
    "HDMI cable 2 m", "Chair mat", "Label printer", "Paper A4 box",
]  # fmt: skip
PAYEES = [
    "Card payment Migros", "Salary March", "Transfer to savings", "Rent Bahnhofstrasse 12",
    "Standing order insurance", "Refund online shop", "ATM withdrawal", "Electricity bill",
    "Phone contract", "Interest",
]  # fmt: skip


def _money(rng: random.Random, low: float, high: float) -> str:
    return f"{rng.uniform(low, high):,.2f}"


def invoice(rng: random.Random) -> Page:
    """Company block, INVOICE with its key-value fields to the right, the ship-to address, then
    items with a narrow right-aligned Qty column left of Description, then totals."""
    family = rng.choice(["narrow", "serif", "noto", "condensed"])
    page = Page(900, 720)
    page.text(40, 30, "Brightline Office AG", face(family, 24, bold=True))
    page.reference.append("Brightline Office AG")
    text_lines(page, 40, 66, ["Seestrasse 41", "8002 Zurich"], face(family, 14))
    page.text(600, 30, "INVOICE", face(family, 24, bold=True))
    page.reference.append("INVOICE")
    number = f"INV-{rng.randint(1000, 9999)}"
    pairs = [("Invoice no.", number), ("Date", "2026-03-14"), ("Due", "2026-04-13")]
    key_values(page, 600, 70, pairs, family, 14, gap=100)
    page.text(40, 150, "Ship to", face(family, 14, bold=True))
    page.reference.append("Ship to")
    text_lines(page, 40, 172, ["Anna Keller", "Hofweg 7", "3011 Bern"], face(family, 14))
    columns = [
        Column("Qty", 56, "right"), Column("Description", 330), Column("Unit price", 130, "right"),
        Column("VAT", 80, "right"), Column("Amount", 130, "right"),
    ]  # fmt: skip
    body = []
    for product in rng.sample(PRODUCTS, rng.randint(4, 7)):
        qty = rng.choice(["1", "1", "1", "2", "3", "10", "12"])
        price = rng.uniform(4, 400)
        vat = rng.choice(["8.1%", "8.1%", "2.6%", "0%"])
        body.append([qty, product, f"{price:,.2f}", vat, f"{price * int(qty):,.2f}"])
    look = Look(family, size=15, row_height=30, rules="header", rule=(60, 60, 60))
    bottom = draw_table(page, 40, 260, columns, body, look)
    totals = [("Subtotal", _money(rng, 500, 3000)), ("Total CHF", _money(rng, 500, 3000))]
    key_values(page, 600, bottom + 30, totals, family, 14, gap=120)
    return page


def statement(rng: random.Random, *, dark: bool) -> Page:
    """A bank statement: debit or credit empty on every row, zebra rows, light or dark."""
    family = rng.choice(["serif", "noto", "liberation-mono", "narrow"])
    background, ink = ((28, 30, 34), (226, 228, 232)) if dark else ((255, 255, 255), (20, 20, 20))
    zebra = (42, 45, 51) if dark else (238, 242, 247)
    page = Page(920, 600, background=background, ink=ink)
    page.text(40, 28, "Cantonal Savings Bank", face(family, 22, bold=True))
    page.reference.append("Cantonal Savings Bank")
    pairs = [("Account", "CH93 0076 2011 6238 5295 7"), ("Period", "01.03.2026 - 31.03.2026")]
    key_values(page, 40, 70, pairs, family, 14, gap=110)
    columns = [
        Column("Date", 100), Column("Booking text", 300), Column("Debit", 130, "right"),
        Column("Credit", 130, "right"), Column("Balance", 140, "right"),
    ]  # fmt: skip
    balance, body = rng.uniform(2000, 9000), []
    for day in sorted(rng.sample(range(1, 29), rng.randint(5, 8))):
        amount = rng.uniform(5, 1500)
        credit = rng.random() < 0.35
        balance += amount if credit else -amount
        money = f"{amount:,.2f}"
        row = ["", money] if credit else [money, ""]
        body.append([f"{day:02d}.03.2026", rng.choice(PAYEES), *row, f"{balance:,.2f}"])
    header = (55, 60, 68) if dark else (214, 222, 235)
    look = Look(family, size=14, row_height=28, ink=ink, header_fill=header, zebra=zebra)
    draw_table(page, 40, 140, columns, body, look)
    return page


def timetable(rng: random.Random) -> Page:
    """A fully ruled timetable; platforms are single digits, empty notes are a dash."""
    family = rng.choice(["serif", "condensed", "mono"])
    page = Page(820, 480)
    page.text(40, 26, "Departures Lausanne", face(family, 22, bold=True))
    page.reference.append("Departures Lausanne")
    columns = [
        Column("Train", 90), Column("Destination", 220), Column("Departs", 100, "right"),
        Column("Platform", 100, "right"), Column("Notes", 180),
    ]  # fmt: skip
    places = ["Geneva Airport", "Brig", "Bern", "Neuchatel", "Vallorbe", "Fribourg", "Sion"]
    body, minute = [], rng.randint(0, 20)
    for place in rng.sample(places, rng.randint(5, 7)):
        minute += rng.randint(3, 9)
        train = rng.choice(["IR", "IC", "RE", "S"]) + str(rng.randint(1, 95))
        notes = rng.choice(["-", "-", "Delayed 5 min", "x", "Change at Bern"])
        body.append([train, place, f"14:{minute:02d}", str(rng.randint(1, 9)), notes])
    look = Look(family, size=15, row_height=32, rules="grid", rule=(90, 90, 90))
    draw_table(page, 40, 80, columns, body, look)
    return page


def spec_sheet(rng: random.Random) -> Page:
    """Two models compared: "232 x 275 x 31 mm", a dash for none, an x for yes; zebra rows."""
    family = rng.choice(["noto", "serif", "narrow"])
    page = Page(800, 520)
    page.text(40, 26, "Technical data", face(family, 22, bold=True))
    page.reference.append("Technical data")
    depth = rng.randint(18, 40)
    specs = [
        ["Dimensions", f"232 x 275 x {depth} mm", f"240 x 281 x {depth + 4} mm"],
        ["Weight", f"{rng.uniform(0.8, 1.6):.2f} kg", f"{rng.uniform(1.6, 2.4):.2f} kg"],
        ["Ports", "2 x USB-C", "3 x USB-C, 1 x HDMI"],
        ["Backlit keys", "-", "x"],
        ["Fingerprint reader", "x", "x"],
        ["Battery", f"{rng.choice([45, 56, 60])} Wh", f"{rng.choice([72, 80, 99])} Wh"],
        ["Fan", "0", "1"],
        ["Warranty", "2 years", "3 years"],
    ]
    columns = [Column("Feature", 220), Column("Basic", 230), Column("Pro", 250)]
    look = Look(family, size=15, row_height=30, zebra=(243, 243, 243), header_fill=(225, 225, 225))
    draw_table(page, 40, 80, columns, rng.sample(specs, rng.randint(5, 8)), look)
    return page


def price_list(rng: random.Random) -> Page:
    """A rule under the header only; a narrow right-aligned pack size next to the product."""
    family = rng.choice(["noto", "liberation-mono", "condensed"])
    page = Page(820, 480)
    page.text(40, 26, "Price list 2026", face(family, 22, bold=True))
    page.reference.append("Price list 2026")
    columns = [
        Column("Item no.", 110), Column("Product", 280), Column("Pack", 70, "right"),
        Column("Unit", 80), Column("Price", 120, "right"),
    ]  # fmt: skip
    body = [
        [f"{rng.randint(10000, 99999)}", product, rng.choice(["1", "6", "12", "1", "50"]),
         rng.choice(["pcs", "box", "set"]), _money(rng, 2, 600)]
        for product in rng.sample(PRODUCTS, rng.randint(5, 8))
    ]  # fmt: skip
    look = Look(family, size=15, row_height=30, rules="header", rule=(40, 40, 40))
    bottom = draw_table(page, 40, 80, columns, body, look)
    text_lines(page, 40, bottom + 24, ["Prices in CHF excl. VAT."], face(family, 13))
    return page


def dark_grid(rng: random.Random) -> Page:
    """A dark app's data grid: a header band, thin rules between rows, percentages, points."""
    family = rng.choice(["condensed", "noto", "narrow"])
    page = Page(860, 460, background=(24, 26, 31), ink=(220, 223, 228))
    page.text(40, 24, "Sprint board", face(family, 20, bold=True))
    page.reference.append("Sprint board")
    columns = [
        Column("ID", 80), Column("Task", 270), Column("Owner", 130), Column("Status", 130),
        Column("Done", 80, "right"), Column("Pts", 60, "right"),
    ]  # fmt: skip
    tasks = ["Login page", "Export to CSV", "Fix crash on start", "Dark theme", "Search index",
             "Upgrade libraries", "Onboarding tour", "Audit log"]  # fmt: skip
    body = [
        [f"T-{rng.randint(100, 999)}", task, rng.choice(["Mia", "Jonas", "Lea", "Noah"]),
         rng.choice(["Open", "In review", "Done"]), rng.choice(["0%", "45%", "100%", "80%"]),
         rng.choice(["1", "2", "3", "5", "8", "0"])]
        for task in rng.sample(tasks, rng.randint(5, 7))
    ]  # fmt: skip
    look = Look(
        family, size=14, row_height=30, ink=(220, 223, 228), header_fill=(40, 44, 52),
        header_ink=(160, 200, 255), rules="rows", rule=(52, 56, 64),
    )  # fmt: skip
    draw_table(page, 30, 70, columns, body, look)
    return page


def packing_slip(rng: random.Random) -> Page:
    """Items on the left, a framed key-value block beside them on the right."""
    family = rng.choice(["serif", "narrow", "noto"])
    page = Page(900, 460)
    page.text(40, 24, "Packing slip", face(family, 22, bold=True))
    page.reference.append("Packing slip")
    columns = [Column("SKU", 100), Column("Qty", 50, "right"), Column("Item", 260)]
    body = [
        [f"SK-{rng.randint(1000, 9999)}", rng.choice(["1", "2", "4", "1", "20"]), product]
        for product in rng.sample(PRODUCTS, rng.randint(4, 6))
    ]
    look = Look(family, size=15, row_height=30, rules="header", rule=(80, 80, 80))
    draw_table(page, 40, 80, columns, body, look)
    page.draw.rectangle((600, 80, 860, 250), outline=(170, 170, 170))
    pairs = [
        ("Order", f"SO-{rng.randint(1000, 9999)}"), ("Carrier", rng.choice(["DHL", "Post"])),
        ("Boxes", str(rng.randint(1, 3))), ("Weight", f"{rng.uniform(1, 9):.1f} kg"),
    ]  # fmt: skip
    key_values(page, 616, 96, pairs, family, 14, gap=90)
    return page


def lone_characters_page(family: str, dark: bool) -> Page:
    """Every lone character in every column of a table: one per cell, left- and right-aligned,
    with words around them."""
    background, ink = ((30, 32, 36), (225, 225, 225)) if dark else ((255, 255, 255), (20, 20, 20))
    page = Page(760, 320, background=background, ink=ink)
    columns = [Column("Item", 220), Column("Qty", 70, "right"), Column("Flag", 90),
               Column("Note", 200)]  # fmt: skip
    body = [
        ["Desk lamp LED", "1", "-", "spare"],
        ["Cable tray", "0", "x", "-"],
        ["Monitor arm", "%", "1", "0"],
        ["Label printer", "x", "%", "1"],
    ]
    draw_table(page, 30, 40, columns, body, Look(family, size=15, ink=ink, rules="header",
                                                 rule=ink))  # fmt: skip
    return page


KINDS: dict[str, Callable[[random.Random], Page]] = {
    "invoice": invoice,
    "statement, light": lambda rng: statement(rng, dark=False),
    "statement, dark": lambda rng: statement(rng, dark=True),
    "timetable": timetable,
    "spec sheet": spec_sheet,
    "price list": price_list,
    "dark grid": dark_grid,
    "packing slip": packing_slip,
}


def table_pages(per_kind: int, seed: int = 28) -> list[TablePage]:
    """`per_kind` pages of every kind, the same for the same seed."""
    pages = []
    for kind, make in KINDS.items():
        for number in range(per_kind):
            page = make(random.Random(f"{seed}/{kind}/{number}"))
            tables = [table.texts() for table in page.tables]
            name = f"{kind.replace(', ', '_').replace(' ', '_')}_{number}"
            pages.append(TablePage(name, kind, page.image, tables, page.reference_text()))
    return pages


def same_row(found: Sequence[str], drawn: Sequence[str]) -> bool:
    """Cells equal, whitespace inside a cell aside."""
    return [" ".join(c.split()) for c in found] == [" ".join(c.split()) for c in drawn]


def best_table(found: Sequence[Sequence[Sequence[str]]], drawn: Rows) -> Rows:
    """The found table holding the most of the drawn rows exactly."""
    tables = [[list(row) for row in table] for table in found]
    return max(tables, key=lambda t: sum(any(same_row(r, d) for r in t) for d in drawn), default=[])
