"""The benchmark's wide pages of small text (issue 50): the full-screen capture of a HiDPI
laptop or a 4K monitor at 100 % scaling, 2,000-4,000 px wide, whose text is 10-12 px. A dark
terminal (a shell session: listings, a log, git) and a light spreadsheet (a data export on a
ruled grid, with its column letters and row numbers).

Screens come in the sizes such machines have. The terminal's lines are as tall as its font's
ascent plus descent, as a terminal sets them; the sheet's rows are as tall as a spreadsheet's
at 100 %. References are in reading order: the terminal line by line, the sheet row by row
(its column letters first, then each row's number and cells), its chrome in screen order.
"""

from __future__ import annotations

import random
import string

from bench.ocr_samples import WORDS, Sample, sample
from bench.ocr_styles_documents import font
from desktop.core.ocr.rendered_pages import Colour, Face, Page

SCREENS = [  # full-screen captures at 100 %: laptops, desktops, an ultrawide, 4K
    (2256, 1504), (2560, 1440), (2560, 1600), (2880, 1800), (3024, 1964), (3200, 1800),
    (3440, 1440), (3840, 1600), (3840, 2160),
]  # fmt: skip
USERS = ["alex", "priya", "tnovak", "mei", "sokafor"]
HOSTS = ["build-07", "ws-lin42", "db-stage", "ci-runner-3", "nas01"]
FOLDERS = ["reports", "billing-api", "infra/terraform", "data/exports", "src/desklens"]
FILE_STEMS = ["q3-summary", "invoices-2025", "customers", "payroll-oct", "backup-manifest",
              "orders-eu", "latency-report", "release-notes", "schema-v14",
              "audit-trail"]  # fmt: skip
EXTENSIONS = [".csv", ".json", ".log", ".tar.gz", ".xlsx", ".sql", ".md", ".pdf"]
MONTHS = ["Sep", "Oct", "Nov"]
COMPANIES = ["Acme Widgets", "Northwind Traders", "Globex GmbH", "Initech Ltd", "Umbrella Foods",
             "Stark Logistics", "Wayne Textiles", "Hooli Cloud", "Vandelay Imports",
             "Soylent Retail", "Tyrell Systems", "Cyberdyne Labs"]  # fmt: skip
REGIONS = ["North", "South", "East", "West", "Central", "Nordics", "Benelux", "Iberia"]
PRODUCTS = ["Desk lamp", "Office chair", "USB-C dock", "Monitor arm", "Webcam HD",
            "Keyboard", "Laptop stand", "Headset", "Cable kit", "Whiteboard"]  # fmt: skip
STATUSES = ["Paid", "Open", "Overdue", "Shipped", "Cancelled", "On hold"]


def _path(rng: random.Random) -> str:
    return (f"/{rng.choice(['srv', 'var', 'home/' + rng.choice(USERS)])}/"
            f"{rng.choice(FOLDERS)}/{rng.choice(FILE_STEMS)}{rng.choice(EXTENSIONS)}")  # fmt: skip


def _phrase(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


# --- the terminal -------------------------------------------------------------------------

TERMINAL = {  # background, ink, title bar, title ink, prompt user, prompt path, warn, error
    "background": (30, 30, 30), "ink": (204, 204, 204), "bar": (48, 48, 48),
    "title": (230, 230, 230), "user": (138, 226, 52), "path": (114, 159, 207),
    "WARN": (252, 233, 79), "ERROR": (239, 41, 41),
}  # fmt: skip
Segments = list[tuple[str, Colour | None]]  # a line's runs of text, each in its colour


def _log_line(rng: random.Random, clock: list[int]) -> Segments:
    """One line of an application's log: timestamp, level, thread, logger, message."""
    clock[0] += rng.randint(0, 9000)  # milliseconds since 09:00
    ms = clock[0]
    stamp = (f"2025-10-{clock[1]:02d} {9 + ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:"
             f"{ms // 1000 % 60:02d}.{ms % 1000:03d}")  # fmt: skip
    level = rng.choices(["INFO", "DEBUG", "WARN", "ERROR"], [10, 4, 2, 1])[0]
    pool = rng.choice(["worker", "sync", "http-nio-8080-exec", "scheduler"])
    thread = f"[{pool}-{rng.randint(1, 12)}]"
    kind = rng.randrange(5)
    logger = ["sync.upload", "api.orders", "db.pool", "auth.session", "export.csv"][kind]
    if kind == 0:
        size = rng.randint(1200, 9_800_000)
        message = f"uploaded {_path(rng)} ({size} bytes) in {rng.randint(1, 2400) / 100:.2f} s"
    elif kind == 1:
        message = (f"GET /api/v2/orders/{rng.randint(10000, 99999)}?include=lines,customer "
                   f"-> {rng.choice([200, 200, 200, 304, 404, 500])} in {rng.randint(3, 900)} ms "
                   f"(request id {rng.getrandbits(48):012x})")  # fmt: skip
    elif kind == 2:
        message = (f"connection pool: {rng.randint(1, 40)} active, {rng.randint(0, 20)} idle, "
                   f"{rng.randint(0, 5)} waiting (max {rng.choice([50, 64, 100])})")  # fmt: skip
    elif kind == 3:
        session = rng.getrandbits(32)
        message = f"session {session:08x} for {rng.choice(USERS)}@example.com {_phrase(rng, 3, 7)}"
    else:
        message = (f"exported {rng.randint(10, 90000)} rows to {_path(rng)}; "
                   f"{_phrase(rng, 4, 12)} ({rng.randint(1, 99)}% of quota)")  # fmt: skip
    colour = TERMINAL.get(level) if level in ("WARN", "ERROR") else None
    return [(f"{stamp} ", None), (f"{level:<5}", colour), (f" {thread} {logger}: {message}", None)]


def _listing(rng: random.Random, user: str) -> list[Segments]:
    """`ls -l` of a folder of exports: right-aligned sizes, as ls aligns them."""
    names = sorted({f"{rng.choice(FILE_STEMS)}{rng.choice(EXTENSIONS)}" for _ in range(12)})
    sizes = [rng.randint(200, 99_000_000) for _ in names]
    width = len(str(max(sizes)))
    lines: list[Segments] = [[(f"total {sum(sizes) // 1024 // 1024 + 1}", None)]]
    for file_name, size in zip(names, sizes, strict=True):
        day = f"{rng.choice(MONTHS)} {rng.randint(1, 28):2d}"
        when = f"{day} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
        mode = rng.choice(["-rw-r--r--", "-rw-rw-r--", "-rwxr-xr-x"])
        lines.append([(f"{mode} 1 {user} {user} {size:>{width}} {when} {file_name}", None)])
    return lines


def _git_log(rng: random.Random) -> list[Segments]:
    return [[(f"{rng.getrandbits(28):07x} ", TERMINAL["WARN"]),
             (f"{_phrase(rng, 3, 9).capitalize()} (#{rng.randint(100, 999)})", None)]
            for _ in range(rng.randint(5, 12))]  # fmt: skip


def _session(rng: random.Random, user: str, host: str, folder: str) -> list[Segments]:
    """Commands and their output, as a shell session scrolls them by (more than a screen)."""
    clock = [rng.randint(0, 3_000_000), rng.randint(1, 28)]
    lines: list[Segments] = []
    while len(lines) < 400:
        command = rng.choice(["ls", "tail", "tail", "git"])
        if command == "ls":
            typed = f"ls -l {rng.choice(['exports/', 'backups/', 'out/'])}"
            output = _listing(rng, user)
        elif command == "tail":
            count = rng.randint(20, 60)
            typed = f"tail -n {count} logs/{rng.choice(['sync', 'api', 'export'])}.log"
            output = [_log_line(rng, clock) for _ in range(count)]
        else:
            typed = f"git log --oneline -n {rng.randint(5, 12)}"
            output = _git_log(rng)
        lines.append(_prompt(user, host, folder) + [(typed, None)])
        lines += output
    return lines


def _prompt(user: str, host: str, folder: str) -> Segments:
    return [(f"{user}@{host}", TERMINAL["user"]), (":", None), (f"~/{folder}", TERMINAL["path"]),
            ("$ ", None)]  # fmt: skip


def _draw_segments(page: Page, x: int, y: int, segments: Segments, face: Face) -> int:
    """A line's coloured runs side by side (monospaced: no gap between runs); the x after."""
    for text, colour in segments:
        page.text(x, y, text, face, fill=colour)
        x += round(face.getlength(text))
    return x


def make_wide_terminal(rng: random.Random, name: str) -> Sample:
    """A terminal maximised on a wide screen, dark: its title bar, then the last screenful of
    a shell session (log lines up to ~280 columns, `ls -l`, `git log`), the prompt last."""
    width, height = rng.choice(SCREENS)
    page = Page(width, height, background=TERMINAL["background"], ink=TERMINAL["ink"])
    face = font("mono", rng.choice([11, 12]))
    ascent, descent = face.getmetrics()
    step = ascent + descent  # a terminal's cell height
    user, host, folder = rng.choice(USERS), rng.choice(HOSTS), rng.choice(FOLDERS)
    bar = 30
    page.draw.rectangle((0, 0, width, bar), fill=TERMINAL["bar"])
    title = f"{user}@{host}: ~/{folder}"
    title_face = font("sans-bold", 12)
    page.text((width - title_face.getlength(title)) / 2, 8, title, title_face,
              fill=TERMINAL["title"])  # fmt: skip
    page.reference.append(title)
    rows = (height - bar - 8) // step
    shown = [*_session(rng, user, host, folder)[-(rows - 1) :], _prompt(user, host, folder)]
    y = bar + 4
    for segments in shown:
        x = _draw_segments(page, 4, y, segments, face)
        y += step
        page.reference.append("".join(text for text, _ in segments).rstrip())
    cursor = (x, y - step, x + round(face.getlength("m")), y - 1)
    page.draw.rectangle(cursor, fill=TERMINAL["ink"])
    page.decoration(cursor)
    return sample(page, name, "wide terminal")


# --- the spreadsheet ----------------------------------------------------------------------

SHEET = {  # window, ink, chrome, header band, grid, header ink, selection
    "window": (255, 255, 255), "ink": (20, 20, 20), "chrome": (243, 243, 243),
    "band": (232, 232, 232), "grid": (212, 212, 212), "muted": (90, 90, 90),
    "select": (33, 115, 70),
}  # fmt: skip
MENU = "File  Edit  View  Insert  Format  Data  Tools  Window  Help"
FIELDS = ["Order date", "Order", "Customer", "Region", "Product", "Qty", "Unit price",
          "Total", "Status", "Owner", "Due", "Notes"]  # fmt: skip


# A sheet's column names in order, A to ZZ (written out here rather than taken from the OCR's
# sheet_headers.column_name: the benchmark's references must not depend on the code it tests).
COLUMN_NAMES = [
    *string.ascii_uppercase,
    *(first + second for first in string.ascii_uppercase for second in string.ascii_uppercase),
]


def _order_row(rng: random.Random, order: int) -> list[str]:
    quantity, price = rng.randint(1, 250), rng.randint(500, 250_000) / 100
    owner = rng.choice(USERS)
    notes = _phrase(rng, 2, 6) if rng.random() < 0.45 else ""
    return [
        f"2025-{rng.randint(7, 10):02d}-{rng.randint(1, 28):02d}", f"SO-{order}",
        rng.choice(COMPANIES), rng.choice(REGIONS), rng.choice(PRODUCTS), str(quantity),
        f"{price:,.2f}", f"{quantity * price:,.2f}", rng.choice(STATUSES),
        f"{owner}@example.com", f"{rng.randint(1, 30):02d}/11/2025", notes,
    ]  # fmt: skip


def make_wide_sheet(rng: random.Random, name: str) -> Sample:
    """A spreadsheet maximised on a wide screen, light: menu line, name box and formula bar,
    the column letters, rows of an order export (empty grid to the right and below, as a
    sheet shows it), sheet tabs and a status line."""
    width, height = rng.choice(SCREENS)
    page = Page(width, height, background=SHEET["window"], ink=SHEET["ink"])
    size = rng.choice([10, 11, 12])
    key = rng.choice(["arial", "sans"])  # Liberation Sans (LibreOffice's), DejaVu Sans
    face, bold, chrome = font(key, size), font(key + "-bold", size), font("sans", 12)
    row_height = size + 9  # 20 px rows at 11 px, as at 100 %
    # Chrome: the menu line, the name box with the selected cell's text.
    page.draw.rectangle((0, 0, width, 62), fill=SHEET["chrome"])
    page.lines(10, 7, [MENU], chrome)
    page.draw.rectangle((6, 32, 86, 54), outline=SHEET["grid"], fill=SHEET["window"])
    page.draw.rectangle((96, 32, width - 6, 54), outline=SHEET["grid"], fill=SHEET["window"])
    rows = [FIELDS, *(_order_row(rng, 10480 + n) for n in range(rng.randint(30, 140)))]
    page.text(12, 37, "A1", chrome)
    page.text(104, 37, rows[0][0], chrome)
    page.reference.append(f"A1 {rows[0][0]}")
    # The columns: each as wide as its longest cell (a sheet's "optimal width"), then the
    # default 64 px columns up to the screen's edge.
    widths = [max(64, round(max(bold.getlength(row[c]) for row in rows)) + 14)
              for c in range(len(FIELDS))]  # fmt: skip
    gutter, top, bottom = 44, 66, height - 52
    while gutter + sum(widths) < width:
        widths.append(64)
    band = top + row_height
    page.draw.rectangle((0, top, width, band), fill=SHEET["band"])
    page.draw.rectangle((0, top, gutter, bottom), fill=SHEET["band"])
    lefts = [gutter + sum(widths[:c]) for c in range(len(widths))]
    letters = COLUMN_NAMES[: len(widths)]
    for left, cell_width, letter in zip(lefts, widths, letters, strict=True):
        page.text(left + (cell_width - face.getlength(letter)) / 2, top + 4, letter, face,
                  fill=SHEET["muted"])  # fmt: skip
    page.reference.append(" ".join(letters))
    y, number = band, 1
    while y + row_height <= bottom:
        label = str(number)
        page.text((gutter - face.getlength(label)) / 2, y + 4, label, face, fill=SHEET["muted"])
        cells = rows[number - 1] if number <= len(rows) else []
        for column, text in enumerate(cells):
            if not text:
                continue
            numeric = column in (5, 6, 7) and number > 1  # figures sit at the cell's right
            used = bold if number == 1 else face
            x = lefts[column] + 6
            if numeric:
                x = lefts[column] + widths[column] - 6 - round(used.getlength(text))
            page.text(x, y + 4, text, used)
        page.reference.append(" ".join([label, *(text for text in cells if text)]))
        y += row_height
        number += 1
    for boundary in range(band, y + 1, row_height):
        page.draw.line([(0, boundary), (width, boundary)], fill=SHEET["grid"])
    for left in [gutter, *lefts[1:]]:
        page.draw.line([(left, top), (left, y)], fill=SHEET["grid"])
    selected = (lefts[0], band, lefts[1], band + row_height)  # A1, as a sheet opens
    page.draw.rectangle(selected, outline=SHEET["select"], width=2)
    # Sheet tabs and the status line.
    tabs = ["Orders", "Customers", "Summary"]
    page.draw.rectangle((0, bottom, width, height), fill=SHEET["chrome"])
    x = 60
    for tab in tabs:
        page.text(x, bottom + 6, tab, chrome)
        x += round(chrome.getlength(tab)) + 30
    page.reference.append(" ".join(tabs))
    status = f"Sheet 1 of 3    Default    English (UK)    Count: {len(rows) - 1}"
    page.text(10, height - 22, status, chrome, fill=SHEET["muted"])
    page.reference.append(status)
    return sample(page, name, "wide sheet")


WIDE_STYLES = [make_wide_terminal, make_wide_sheet]
