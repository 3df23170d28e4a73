"""The benchmark's styles of issue 36, the kinds of page whose layout broke unseen: documentation
pages with a heading inside each column, an e-mail pager (key bar, header block, nested
quotes), a man page and a terminal UI. Terminal pages are monospaced; their reference keeps
what a reader must keep: the "> " of a quoted line, the order of the key bar's keys.
"""

from __future__ import annotations

import random

from bench.ocr_samples import WORDS, Sample, paragraph, sample, sentence
from bench.ocr_styles_documents import font
from desktop.core.ocr.rendered_pages import Face, Page, wrap

TERMINAL_THEMES = {  # background, ink, bar background, bar ink
    "dark": ((18, 18, 20), (210, 210, 210), (60, 60, 68), (240, 240, 240)),
    "light": ((252, 252, 250), (30, 30, 30), (210, 214, 222), (20, 20, 20)),
}


def _title(rng: random.Random, words: int) -> str:
    return sentence(rng, words).rstrip(".,;:!?")


def make_doc_columns(rng: random.Random, name: str) -> Sample:
    """A documentation page in two columns, each a heading then paragraphs, then another
    heading and paragraphs: the reading order is column by column, heading first."""
    column, gutter, size = rng.choice([(460, 44, 15), (520, 56, 16)])
    page = Page(80 + 2 * column + gutter, 960)
    body, heading = font("sans", size), font("sans-bold", size + 5)
    y0 = page.lines(40, 28, [_title(rng, 5)], font("sans-bold", 28)) + 12
    step = round(size * 1.45)
    for left in (40, 40 + column + gutter):
        y = y0
        for _ in range(2):
            # A heading wider than its column wraps, as a page would: drawn on one line it
            # ran into the next column's heading (the overlap read as a layout fault).
            y = (
                page.lines(left, y, wrap(_title(rng, rng.randint(2, 4)), heading, column), heading)
                + 6
            )
            for _ in range(rng.randint(1, 2)):
                lines = wrap(paragraph(rng, rng.randint(2, 3)), body, column)
                room = (page.height - 40 - y) // step
                if room < 2:
                    break
                y = page.lines(left, y, lines[:room], body) + size
            y += 8
    return sample(page, name, "doc columns")


def _bar(page: Page, y: int, text: str, face: Face, colours: tuple) -> int:
    """A full-width inverted bar (a pager's title or key bar) with its text."""
    _, _, background, ink = colours
    page.draw.rectangle((0, y - 4, page.width, y + face.size + 6), fill=background)
    return page.lines(8, y, [text], face, fill=ink)


KEY_BARS = [
    "q:Exit  -:PrevPg  <Space>:NextPg  v:View Attachm.  d:Del  r:Reply  j:Next  ?:Help",
    "i:Exit  -:PrevPg  <Space>:NextPg  d:Del  u:Undel  r:Reply  g:Group  ?:Help",
    "q:Exit  -:PrevPg  <Space>:NextPg  v:View Attachm.  d:Del  r:Reply  j:Next  ?:Help",
    "^G Get Help  ^O Write Out  ^W Where Is  ^K Cut  ^X Exit  ^J Justify",
]


def make_pager(rng: random.Random, name: str) -> Sample:
    """A terminal mail client's pager: key bar, header block, the reply with nested quotes."""
    colours = TERMINAL_THEMES[rng.choice(["dark", "light"])]
    page = Page(rng.choice([980, 1100]), 760, background=colours[0], ink=colours[1])
    face = font("mono", rng.choice([14, 15]))
    spacing = rng.choice([1.25, 1.45])  # terminals set lines tight
    step = round(face.size * spacing)
    y = _bar(page, 8, rng.choice(KEY_BARS), face, colours) + 10
    sender, other = rng.sample(["Alex Morgan", "Priya Shah", "Tomas Novak", "Mei Lin"], 2)
    pad = 9 if rng.random() < 0.5 else 0  # mutt aligns the values; others do not
    day, hour, minute = rng.randint(1, 28), rng.randint(8, 18), rng.randint(10, 59)
    headers = [
        f"{'Date:':<{pad}} Mon, {day} Oct 2025 {hour}:{minute}",
        f"{'From:':<{pad}} {sender} <{sender.split()[0].lower()}@example.com>",
        f"{'To:':<{pad}} {other} <{other.split()[0].lower()}@example.org>",
        f"{'Subject:':<{pad}} Re: {_title(rng, 4)}",
    ]
    y = page.lines(8, y, headers, face, spacing=spacing) + step
    columns = (page.width - 30) // round(face.getlength("m"))
    y = page.lines(8, y, _wrap_chars(paragraph(rng, 2), columns), face, spacing=spacing) + step
    wrote = f"On {rng.randint(1, 28)} Oct 2025, {other} wrote:"
    y = page.lines(8, y, [wrote], face, spacing=spacing)
    for depth in rng.choice([[1, 2, 1], [1, 1, 2, 2], [2, 1]]):
        prefix = "> " * depth
        lines = _wrap_chars(paragraph(rng, 1), columns - len(prefix))[:3]
        y = page.lines(8, y, [prefix + line for line in lines], face, spacing=spacing)
    footer = f"-- {sender.split()[0]} -- ({rng.randint(20, 99)}%)"
    _bar(page, page.height - face.size - 10, footer, face, colours)
    return sample(page, name, "e-mail pager")


def _wrap_chars(text: str, columns: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > columns:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


MAN_SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS"]


def make_man_page(rng: random.Random, name: str) -> Sample:
    """A man page in a terminal: a header line, bold section names at the margin, indented
    paragraphs, options with their descriptions below them."""
    colours = TERMINAL_THEMES[rng.choice(["dark", "light"])]
    page = Page(1000, 800, background=colours[0], ink=colours[1])
    face = bold = font("mono", 14)
    step = round(face.size * 1.45)
    command = rng.choice(["backup", "syncdir", "reportgen", "netcheck"])
    columns = (page.width - 120) // round(face.getlength("m"))
    header = f"{command.upper()}(1)        User Commands        {command.upper()}(1)"
    y = page.lines(8, 10, [header], face) + step
    for section in MAN_SECTIONS[: rng.randint(3, 5)]:
        if y > page.height - 5 * step:
            break
        y = page.lines(8, y, [section], bold)
        if section == "NAME":
            y = page.lines(64, y, [f"{command} - {_title(rng, 5).lower()}"], face)
        elif section == "SYNOPSIS":
            y = page.lines(64, y, [f"{command} [-v] [-o FILE] SOURCE..."], face)
        elif section == "OPTIONS":
            for option in rng.sample(["-v, --verbose", "-o FILE", "-n, --dry-run", "-q"], 2):
                y = page.lines(64, y, [option], face)
                y = page.lines(120, y, _wrap_chars(sentence(rng, 10), columns - 8)[:2], face)
        else:
            lines = _wrap_chars(paragraph(rng, 2), columns)[:4]
            y = page.lines(64, y, lines, face)
        y += step
    return sample(page, name, "man page")


def make_tui(rng: random.Random, name: str) -> Sample:
    """A terminal UI: a menu line, a framed list of tasks with their state, a framed detail
    pane below it, and a key bar at the bottom."""
    colours = TERMINAL_THEMES[rng.choice(["dark", "light"])]
    page = Page(1100, 720, background=colours[0], ink=colours[1])
    face = font("mono", 14)
    step = round(face.size * 1.6)
    _bar(page, 6, "  File  Edit  View  Tasks  Help", face, colours)
    page.draw.rectangle((6, 40, page.width - 6, 330), outline=colours[1])
    y = page.lines(20, 50, [f"Tasks ({rng.randint(5, 40)} open)"], face) + 4
    for _ in range(rng.randint(5, 8)):
        task = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 4))).capitalize()
        state = rng.choice(["open", "done", "waiting", "review"])
        line = f"{rng.randint(100, 999)}  {task:<34}{state:<10}{rng.randint(1, 28):02d}/10/2025"
        page.draw.text((20, y), line, font=face, fill=colours[1])
        page.reference.append(line)
        y += step
    page.draw.rectangle((6, 345, page.width - 6, 660), outline=colours[1])
    y = page.lines(20, 356, [f"Details: {_title(rng, 3)}"], face, spacing=1.6) + 4
    columns = (page.width - 60) // round(face.getlength("m"))
    for _ in range(2):
        lines = _wrap_chars(paragraph(rng, 2), columns)
        room = (650 - y) // step
        if room < 1:
            break
        y = page.lines(20, y, lines[:room], face, spacing=1.6) + 4
    _bar(page, page.height - 30, "F1 Help  F2 New  F3 Edit  F5 Refresh  F10 Quit", face, colours)
    return sample(page, name, "terminal UI")


APP_THEMES = {  # window, sidebar, pane line, ink, muted ink
    "light": ((255, 255, 255), (246, 246, 246), (222, 222, 222), (25, 25, 25), (110, 110, 110)),
    "dark": ((30, 31, 34), (40, 41, 45), (62, 63, 68), (226, 226, 226), (150, 150, 150)),
}
APP_KINDS = [  # sidebar title, its button, its entries, the content's toolbar
    ("Chats", "New chat", ["Invoice totals", "Quarterly sales chart", "Error dialog in setup",
                           "Train timetable photo", "Meeting notes", "Receipt from lunch"],
     ["Capture", "Export", "Settings"]),
    ("Inbox", "Compose", ["Alex Morgan", "Priya Shah", "Tomas Novak", "Mei Lin", "Sam Okafor",
                          "Billing team"], ["Reply", "Forward", "Archive"]),
    ("Projects", "Add", ["Website refresh", "Budget review", "Hiring plan", "Office move",
                         "Customer survey", "Release notes"], ["Share", "Filter", "Settings"]),
]  # fmt: skip


def make_app_panes(rng: random.Random, name: str) -> Sample:
    """A desktop app: a sidebar (its header level with the content's toolbar, entries with a
    date at its right edge) and the content, a thin line drawn between them, a status bar
    across the bottom. Read as the window shows it: the sidebar, then the content."""
    window, side, rule, ink, muted = APP_THEMES[rng.choice(["light", "dark"])]
    width, height = rng.choice([(1100, 720), (1280, 800)])
    sidebar = rng.choice([220, 250, 280])
    page = Page(width, height, background=window, ink=ink)
    face, bold, small = font("sans", 14), font("sans-bold", 16), font("sans", 12)
    title, button, entries, tools = rng.choice(APP_KINDS)
    page.draw.rectangle((0, 0, sidebar - 1, height - 30), fill=side)
    page.draw.line((sidebar, 0, sidebar, height - 30), fill=rule)
    page.draw.line((0, height - 29, width, height - 29), fill=rule)
    page.text(14, 18, title, bold)
    page.text(sidebar - 16 - round(face.getlength(button)), 19, button, face)
    page.reference.append(f"{title} {button}")
    y = 70
    for entry in rng.sample(entries, rng.randint(3, 6)):
        date = f"{rng.randint(1, 28)} {rng.choice(['Oct', 'Nov', 'Dec'])}"
        page.text(20, y, entry, face)
        page.text(sidebar - 14 - round(small.getlength(date)), y + 2, date, small, fill=muted)
        page.reference.append(f"{entry} {date}")
        y += 36
    heading = _title(rng, rng.randint(2, 4))
    page.text(sidebar + 22, 18, heading, bold)
    x = width - 16
    for label in reversed(tools):
        x -= round(face.getlength(label)) + 24
        page.text(x, 19, label, face)
    page.reference.append(" ".join([heading, *tools]))
    y = 80
    for _ in range(rng.randint(2, 3)):
        lines = wrap(paragraph(rng, rng.randint(2, 3)), face, width - sidebar - 80)
        y = page.lines(sidebar + 40, y, lines[: max(1, (height - 120 - y) // 22)], face) + 18
        if y > height - 160:
            break
    status = [
        "Ready",
        f"{rng.randint(2, 90)} items",
        f"Synced {rng.randint(8, 18)}:{rng.randint(10, 59)}",
    ]
    for text, left in zip(status, (14, 160, width - 140), strict=True):
        page.text(left, height - 22, text, small, fill=muted)
    page.reference.append(" ".join(status))
    return sample(page, name, "app with panes")


PAGE_STYLES = [make_doc_columns, make_pager, make_man_page, make_tui, make_app_panes]
