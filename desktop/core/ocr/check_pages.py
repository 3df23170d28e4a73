"""The fixed pages the INT8 models must read as the FP32 models do before they are used on a CPU
(`int8_check.py`), drawn with Pillow at run time: the kinds of page INT8 read differently on
some CPU. Spaces between words ("Invoice4711", "byFriday"), a light-grey page (read as nothing
where 8-bit sums saturated), small print, lone characters in table cells (a lone "-" read "."
with AMX, "1" beside "-" read "1."), an invoice's items with a narrow right-aligned Qty
column left of the Description and a key-value block above them (cells joined by INT8), and a
dark app's data grid with thin rules between its rows ("100%" read "100%6" on an AVX2 CPU).

The faces are the first of each family's files Pillow finds (Debian's DejaVu and Liberation,
Windows' own), else Pillow's built-in face: the pages need not look alike on every machine, as
INT8 is compared with FP32 on the same pages, never with a stored text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from PIL import Image

from desktop.core.ocr.rendered_pages import Colour, Face, Page, available_fonts, named_font

INVOICE = [
    "Invoice 4711 for the batch of April",
    "Total amount due 12,450.50 EUR by Friday",
    "Ship to: Mrs Jane Müller, 12 Long Road",
]
GREY = [
    "Backups run every night at 02:00",
    "The report is due on 14 March 2026",
    "Contact the support team for access",
]
SMALL = [
    "Order 5521 ships in 3 boxes to Berlin",
    "Warranty: 24 months from the date of purchase",
    "Version 2.4.1 fixes the export of large tables",
]
LONE_ROWS = [
    ["Item", "Qty", "Flag", "Note"],
    ["Desk lamp LED", "1", "-", "spare"],
    ["Cable tray", "0", "x", "-"],
    ["Monitor arm", "%", "1", "0"],
    ["Label printer", "x", "%", "1"],
]
ITEM_ROWS = [
    ["Qty", "Description", "Unit price", "VAT", "Amount"],
    ["1", "Desk lamp LED", "89.90", "8.1%", "89.90"],
    ["12", "HDMI cable 2 m", "7.50", "8.1%", "90.00"],
    ["3", "USB-C hub 7-port", "45.00", "0%", "135.00"],
    ["1", "Chair mat", "59.00", "2.6%", "59.00"],
]
GRID_ROWS = [
    ["ID", "Task", "Owner", "Done", "Pts"],
    ["T-412", "Search index", "Lea", "80%", "2"],
    ["T-733", "Onboarding tour", "Mia", "100%", "8"],
    ["T-158", "Fix crash on start", "Noah", "0%", "1"],
    ["T-690", "Dark theme", "Jonas", "45%", "5"],
]
FAMILIES: dict[str, tuple[str, ...]] = {
    "sans": ("DejaVuSans.ttf", "LiberationSans-Regular.ttf", "arial.ttf"),
    "sans-bold": ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf", "arialbd.ttf"),
    "serif": ("DejaVuSerif.ttf", "LiberationSerif-Regular.ttf", "times.ttf"),
    "serif-bold": ("DejaVuSerif-Bold.ttf", "LiberationSerif-Bold.ttf", "timesbd.ttf"),
    "narrow": ("LiberationSansNarrow-Regular.ttf", "DejaVuSansCondensed.ttf", "arialn.ttf"),
    "narrow-bold": ("LiberationSansNarrow-Bold.ttf", "DejaVuSansCondensed-Bold.ttf", "arialnb.ttf"),
}
DARK, LIGHT = ((30, 32, 36), (225, 225, 225)), ((255, 255, 255), (20, 20, 20))


@dataclass(frozen=True)
class CheckPage:
    name: str
    image: Image.Image
    lines: tuple[str, ...] = ()  # the text it shows, where it is plain lines (the ISA tests')


@cache
def _face(family: str, size: int) -> Face:
    return named_font(available_fonts(FAMILIES[family])[0], size)


def _lines(lines: Sequence[str], *, size: int, width: int, ink: Colour = (20, 20, 20)) -> Page:
    page = Page(width, 40 + round(size * 1.6) * len(lines), ink=ink)
    page.lines(24, 20, list(lines), _face("sans", size), spacing=1.6)
    return page


def _table(
    page: Page,
    top: int,
    rows: Sequence[Sequence[str]],
    columns: Sequence[tuple[int, str]],
    family: str,
    size: int = 15,
    rule: Colour | None = None,
) -> None:
    """`rows` (the header first, bold, a rule under it) in `columns` of (width, "left" or
    "right" alignment), from x = 30; a thin `rule` between the rows when given."""
    regular, bold, height = _face(family, size), _face(f"{family}-bold", size), 30
    for number, row in enumerate(rows):
        left, y = 30, top + number * height + (height - size) / 2 - 2
        for (width, align), text in zip(columns, row, strict=True):
            used = bold if number == 0 else regular
            x = left + 8 if align == "left" else left + width - 8 - used.getlength(text)
            page.text(x, y, text, used)
            left += width
        page.reference.append(" ".join(row))
    right = 30 + sum(width for width, _ in columns)
    page.draw.line([(30, top + height), (right, top + height)], fill=page.ink, width=2)
    for number in range(2, len(rows)) if rule else ():
        page.draw.line([(30, top + number * height), (right, top + number * height)], fill=rule)


def lone_characters(family: str, colours: tuple[Colour, Colour]) -> Page:
    page = Page(760, 200, background=colours[0], ink=colours[1])
    _table(page, 20, LONE_ROWS, [(220, "left"), (70, "right"), (90, "left"), (200, "left")], family)
    return page


def invoice_items() -> Page:
    page = Page(760, 330)
    for number, (label, value) in enumerate([("Invoice no.", "INV-5610"), ("Due", "2026-04-13")]):
        page.text(470, 20 + 24 * number, label, _face("narrow-bold", 14))
        page.text(570, 20 + 24 * number, value, _face("narrow", 14))
    columns = [(56, "right"), (300, "left"), (120, "right"), (80, "right"), (120, "right")]
    _table(page, 90, ITEM_ROWS, columns, "narrow")
    return page


def dark_grid() -> Page:
    page = Page(760, 200, background=(24, 26, 31), ink=(220, 223, 228))
    columns = [(80, "left"), (270, "left"), (130, "left"), (80, "right"), (60, "right")]
    _table(page, 20, GRID_ROWS, columns, "narrow", 14, rule=(52, 56, 64))
    return page


def check_pages() -> list[CheckPage]:
    """The pages, the same on one machine every time; those INT8 read otherwise on some CPU
    first, where a mix of INT8 and FP32 that reads one otherwise stops (`int8_check.decide`)."""
    return [
        CheckPage("lone characters", lone_characters("serif", LIGHT).image),
        CheckPage("dark grid", dark_grid().image),
        CheckPage("lone characters, dark", lone_characters("sans", DARK).image),
        CheckPage("invoice items", invoice_items().image),
        CheckPage("invoice", _lines(INVOICE, size=18, width=760).image, tuple(INVOICE)),
        CheckPage(
            "light grey",
            _lines(GREY, size=18, width=760, ink=(175, 175, 175)).image,
            tuple(GREY),
        ),
        CheckPage("small print", _lines(SMALL, size=12, width=600).image, tuple(SMALL)),
    ]
