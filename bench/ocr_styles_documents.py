"""The benchmark's document styles (issue 3's set): prose in several themes, fonts and sizes,
two columns, a ruled table, an invoice, code, CJK, degraded captures and an application window.
Each maker takes a seeded Random and a name and returns a Sample with its truth.
"""

from __future__ import annotations

import random

import numpy as np
from PIL import Image, ImageFilter

from bench.ocr_samples import (
    CJK_PHRASES,
    WORDS,
    Sample,
    jpeg,
    paragraphs,
    sample,
    sentence,
)
from desktop.core.ocr.rendered_pages import Face, Page, TruthCell, TruthTable, wrap_cjk
from desktop.core.ocr.rendered_pages import font as any_font


def font(key: str, size: int) -> Face:
    """The exact faces the figures were measured with (no stand-ins)."""
    return any_font(key, size, required=True)


def document(
    rng: random.Random,
    face_key: str,
    size: int,
    *,
    width: int | None = None,
    height: int = 800,
    **colours: tuple[int, int, int],
) -> Page:
    """A heading and paragraphs filling the page: the common base of several styles."""
    page = Page(width or rng.choice([1100, 1280, 1366]), height, **colours)
    heading = font(face_key + "-bold", size + 8)
    y = page.lines(40, 30, [sentence(rng, 5).rstrip(".,;:!?")], heading) + size
    paragraphs(page, 40, y, page.width - 80, font(face_key, size), rng, page.height - 30)
    return page


def make_plain(rng: random.Random, name: str) -> Sample:
    return sample(document(rng, "sans", rng.choice([14, 15, 16])), name, "plain")


def make_dark(rng: random.Random, name: str) -> Sample:
    page = document(rng, "arial", 15, background=(30, 31, 34), ink=(220, 221, 222))
    return sample(page, name, "dark theme")


def make_serif(rng: random.Random, name: str) -> Sample:
    page = document(rng, "serif", rng.choice([20, 24]), background=(250, 246, 235))
    return sample(page, name, "serif, large")


def make_small(rng: random.Random, name: str) -> Sample:
    return sample(document(rng, "arial", rng.choice([9, 10, 11]), height=600), name, "small font")


def make_low_contrast(rng: random.Random, name: str) -> Sample:
    background, ink = rng.choice(
        [((235, 235, 235), (165, 165, 165)), ((40, 44, 52), (110, 118, 130))]
    )
    page = document(rng, "sans", 15, background=background, ink=ink)
    return sample(page, name, "low contrast")


def make_jpeg(rng: random.Random, name: str) -> Sample:
    """A screenshot shrunk and recompressed, as chat apps do when it is shared."""
    shot = sample(document(rng, "arial", 16), name, "JPEG, shrunk")
    small = shot.image.resize(
        (round(shot.image.width * 0.8), round(shot.image.height * 0.8)), Image.BILINEAR
    )
    shot.image = jpeg(small, quality=rng.choice([25, 35]))
    return shot


def make_hidpi(rng: random.Random, name: str) -> Sample:
    return sample(document(rng, "sans", 30, width=2560, height=1600), name, "HiDPI 2x")


def make_rotated(rng: random.Random, name: str) -> Sample:
    """A phone photo of a screen: tilted, slightly keystoned, unevenly lit, blurred, noisy."""
    shot = sample(document(rng, "sans", 16, width=1100, height=700), name, "photo, tilted")
    image = shot.image.rotate(
        rng.choice([-4.0, -2.5, 2.5, 4.0]),
        resample=Image.BICUBIC,
        expand=True,
        fillcolor=(200, 200, 195),
    )
    width, height = image.size
    inset = [rng.uniform(0, 0.02) * width for _ in range(4)]
    quad = (inset[0], 0, inset[1], height, width - inset[2], height, width - inset[3], 0)
    image = image.transform(image.size, Image.QUAD, quad, Image.BICUBIC)
    noise = np.random.default_rng(rng.randint(0, 1 << 30))
    light = np.linspace(0.8, 1.05, width)[np.newaxis, :, np.newaxis]
    pixels = np.asarray(image.filter(ImageFilter.GaussianBlur(0.8)), dtype=np.float32) * light
    pixels += noise.normal(0, 5, (height, width, 1))
    shot.image = jpeg(Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)), quality=60)
    return shot


def make_two_columns(rng: random.Random, name: str) -> Sample:
    column, gutter, size = rng.choice([(460, 40, 15), (540, 50, 16)])
    page = Page(80 + 2 * column + gutter, 900)
    y = page.lines(40, 30, [sentence(rng, 6).rstrip(".,;:!?")], font("serif-bold", 26)) + 10
    for left in (40, 40 + column + gutter):
        paragraphs(page, left, y, column, font("serif", size), rng, page.height - 30)
    return sample(page, name, "two columns")


def table_rows(rng: random.Random, rows: int) -> list[list[str]]:
    header = ["Item", "Region", "Qty", "Price", "Status"]
    regions = ["North", "South", "East", "West", "Central"]
    statuses = ["Open", "Closed", "Pending", "Shipped"]
    body = [
        [
            rng.choice(WORDS).capitalize() + " " + rng.choice(WORDS),
            rng.choice(regions),
            str(rng.randint(1, 500)),
            f"${rng.randint(1, 999)}.{rng.randint(0, 99):02d}",
            rng.choice(statuses),
        ]
        for _ in range(rows)
    ]
    return [header, *body]


def make_ruled_table(rng: random.Random, name: str) -> Sample:
    """A grid table; half of them with a filled header row and zebra stripes."""
    size, styled = rng.choice([13, 14, 15]), rng.random() < 0.5
    page = Page(1000, 560)
    y = page.lines(30, 24, [sentence(rng, 4).rstrip(".,;:!?")], font("arial-bold", 20)) + 10
    rows = table_rows(rng, rng.randint(8, 11))
    widths, row_height, left = [260, 150, 90, 120, 130], size * 2 + 6, 30
    right, top = left + sum(widths), y
    body, bold = font("arial", size), font("arial-bold", size)
    table = TruthTable()
    for number, row in enumerate(rows):
        ink = page.ink
        if styled and number == 0:
            page.draw.rectangle((left, y, right, y + row_height), fill=(44, 82, 130))
            ink = (255, 255, 255)
        elif styled and number % 2 == 0:
            page.draw.rectangle((left, y, right, y + row_height), fill=(236, 241, 247))
        x, cells = left, []
        for cell, cell_width in zip(row, widths, strict=True):
            cells.append(TruthCell(cell, (x, y, x + cell_width, y + row_height)))
            page.text(x + 8, y + 7, cell, bold if number == 0 else body, fill=ink)
            x += cell_width
        table.rows.append(cells)
        page.reference.append(" ".join(row))
        y += row_height
    rule = (150, 150, 150)
    for boundary in range(top, y + 1, row_height):
        page.draw.line([(left, boundary), (right, boundary)], fill=rule)
    x = left
    for cell_width in [0, *widths]:
        x += cell_width
        page.draw.line([(x, top), (x, y)], fill=rule)
    page.tables.append(table)
    return sample(page, name, "ruled table")


def make_invoice(rng: random.Random, name: str) -> Sample:
    page = Page(1000, 760)
    face, bold = font("arial", 14), font("arial-bold", 14)
    y = page.lines(40, 30, ["Northwind Supplies Ltd"], font("arial-bold", 24)) + 4
    street = f"{rng.randint(10, 400)} Harbour Road"
    y = page.lines(
        40, y, [street, f"Bristol BS{rng.randint(1, 9)} 4QA", "VAT GB 123 4567 89"], face
    )
    y = page.lines(40, y + 16, ["INVOICE"], font("arial-bold", 20)) + 12
    bill = [
        "Bill to:",
        f"{rng.choice(WORDS).capitalize()} Consulting",
        f"{rng.randint(1, 99)} Market Street",
        "Leeds LS1 5AB",
    ]
    meta = [
        f"Invoice no: INV-{rng.randint(1000, 9999)}",
        f"Date: {rng.randint(10, 28)}/0{rng.randint(1, 9)}/2025",
        "Terms: 30 days",
    ]
    bottom = page.lines(40, y, bill, face)
    y = max(page.lines(620, y, meta, face), bottom) + 24
    columns = [(40, "Description"), (520, "Qty"), (620, "Unit price"), (800, "Amount")]
    table = TruthTable([[TruthCell(text, page.text(x, y, text, bold)) for x, text in columns]])
    page.tables.append(table)
    page.reference.append(" ".join(header for _, header in columns))
    y += 30
    total = 0
    for _ in range(rng.randint(5, 9)):
        quantity, price = rng.randint(1, 20), rng.randint(5, 300)
        total += quantity * price
        description = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} service"
        cells = [description, str(quantity), f"{price}.00", f"{quantity * price}.00"]
        drawn = [page.text(x, y, cell, face) for (x, _), cell in zip(columns, cells, strict=True)]
        table.rows.append([TruthCell(c, box) for c, box in zip(cells, drawn, strict=True)])
        page.reference.append(" ".join(cells))
        y += 26
    page.lines(620, y + 14, [f"Total due: {total}.00 GBP"], bold)
    return sample(page, name, "invoice")


CODE = [
    "import json",
    "from pathlib import Path",
    "",
    'DEFAULTS = {"theme": "dark", "font_size": 13, "autosave": True}',
    "",
    "",
    "def load_settings(path: Path) -> dict:",
    '    """Read the settings file, falling back to defaults."""',
    "    if not path.exists():",
    "        return dict(DEFAULTS)",
    '    with path.open(encoding="utf-8") as handle:',
    "        data = json.load(handle)",
    "    for key, value in DEFAULTS.items():",
    "        data.setdefault(key, value)  # keep user values",
    "    return data",
    "",
    "",
    "class Cache:",
    "    def __init__(self, limit: int = 128) -> None:",
    "        self.items: dict[str, bytes] = {}",
    "        self.limit = limit",
    "",
    "    def get(self, key: str) -> bytes | None:",
    "        return self.items.get(key)",
    "",
    "    def put(self, key: str, value: bytes) -> None:",
    "        if len(self.items) >= self.limit:",
    "            self.items.pop(next(iter(self.items)))",
    "        self.items[key] = value",
]


def make_code(rng: random.Random, name: str) -> Sample:
    dark = rng.random() < 0.5
    background, ink = ((30, 30, 30), (212, 212, 212)) if dark else ((250, 250, 250), (36, 41, 46))
    page = Page(900, 740, background=background, ink=ink)
    start = rng.randrange(len(CODE))
    lines = CODE[start:] + CODE[:start]
    page.lines(24, 16, lines, font("mono", rng.choice([13, 14])), spacing=1.5)
    page.reference = [line for line in page.reference if line]
    return sample(page, name, "code")


def make_cjk(rng: random.Random, name: str) -> Sample:
    page = Page(1000, 700)
    face = font("cjk", 20)
    y = page.lines(40, 30, [rng.choice(CJK_PHRASES) + " 2025"], font("cjk", 28)) + 10
    while y < page.height - 160:
        text = "，".join(rng.sample(CJK_PHRASES, 4)) + "。"
        if rng.random() < 0.6:
            text = text.replace("，", f"，版本 {rng.randint(2, 9)}.{rng.randint(0, 9)} ", 1)
        y = page.lines(40, y, wrap_cjk(text, face, 900), face) + 12
    return sample(page, name, "CJK", lang="chi_sim+eng")


def make_ui(rng: random.Random, name: str) -> Sample:
    """An application window: title bar, toolbar, sidebar, content with a form, status bar."""
    dark = rng.random() < 0.5
    surface, panel, ink = (
        ((37, 37, 38), (50, 50, 52), (225, 225, 225))
        if dark
        else ((245, 246, 248), (232, 234, 238), (30, 30, 30))
    )
    page = Page(1280, 800, background=surface, ink=ink)
    draw, face, small = page.draw, font("sans", 14), font("sans", 12)
    draw.rectangle((0, 0, 1280, 36), fill=(52, 58, 70))
    title = f"{rng.choice(WORDS).capitalize()} Manager - Project {rng.randint(1, 99)}"
    page.lines(16, 10, [title], face, fill=(235, 235, 235))
    buttons = rng.sample(["New", "Open", "Save", "Export", "Share", "Print", "Undo"], 5)
    x = 16
    for label in buttons:
        width = round(face.getlength(label)) + 24
        draw.rounded_rectangle((x, 48, x + width, 78), 5, outline=(150, 150, 150), fill=panel)
        draw.text((x + 12, 55), label, font=face, fill=ink)
        x += width + 10
    page.reference.append(" ".join(buttons))
    draw.rectangle((0, 90, 220, 770), fill=panel)
    menu = rng.sample(
        ["Dashboard", "Inbox", "Calendar", "Reports", "Customers", "Settings", "Help", "Archive"], 7
    )
    page.lines(24, 110, menu, face, spacing=2.6)
    y = page.lines(260, 110, [sentence(rng, 4).rstrip(".,;:!?")], font("sans-bold", 22)) + 6
    y = paragraphs(page, 260, y, 960, face, rng, 420)
    for label in ["Full name", "Email address", "Department"]:
        value = {"Full name": "Jordan Lee", "Email address": "jordan.lee@example.com"}.get(
            label, "Finance"
        )
        page.lines(260, y + 7, [label], face)
        draw.rectangle((420, y, 760, y + 32), outline=(150, 150, 150), fill=panel)
        draw.text((430, y + 7), value, font=face, fill=ink)
        page.reference[-1] += " " + value
        y += 46
    paragraphs(page, 260, y + 10, 960, face, rng, 750)
    draw.rectangle((0, 770, 1280, 800), fill=panel)
    saved = f"{rng.randint(1, 12)}:{rng.randint(10, 59)}"
    status = f"Ready - {rng.randint(2, 90)} items - last saved {saved}"
    page.lines(12, 777, [status], small)
    return sample(page, name, "UI screenshot")


DOCUMENT_STYLES = [
    make_plain,
    make_dark,
    make_serif,
    make_small,
    make_low_contrast,
    make_jpeg,
    make_hidpi,
    make_rotated,
    make_two_columns,
    make_ruled_table,
    make_invoice,
    make_code,
    make_cjk,
    make_ui,
]
