"""Decorations are not text: bullets, legend swatches, status dots, checkbox and radio outlines,
toggles and chart lines that the recognizer reads as glyphs. They are dropped before layout
(in text, Markdown and JSON alike); a checkbox is not rendered as `[x]`, because its state is
not in the characters the recognizer returns.
"""

from __future__ import annotations

import re

from desktop.core.ocr.models import TextFragment

# Shapes the recognizer names when it reads a drawn dot, square or tick.
GLYPHS = "●•○◦■□▪▫◆◇☐☑☒✓✔✗✘◉◎⊙⦿►▶▸"
# What a checkbox, radio, toggle or avatar outline reads as, and how wide (over its height)
# its box must be to be a shape: a digit is taller than wide (measured: a "0" tick label
# boxes 13 x 15 px, a 16 px checkbox read as "0" 25 x 20 px, a toggle read as "O" 23 x 23 px).
OUTLINES = {"0": 1.1, "O": 0.9, "o": 0.9}
ALWAYS_OUTLINES = frozenset("〇口回")
# A chart line or a divider read as a dash: far wider than tall.
STROKES = frozenset("一-—–_~")
# A radio button or checkbox boxed with its label reads as "O Daily" or "ODaily": an O before
# a capitalised word. (The price: a word such as "OAuth" at the start of a fragment loses its O.)
_EDGE_GLYPHS = re.compile(
    rf"^([{GLYPHS}]+\s*|[Oo○◯] ?(?=[A-ZÀ-Ý][a-zà-ÿ]))?(.*?)(\s*[{GLYPHS}]+)?$", re.DOTALL
)


def is_decoration(fragment: TextFragment) -> bool:
    """A fragment that is only a drawn shape."""
    text = fragment.text.strip()
    left, top, right, bottom = fragment.box
    width, height = right - left, max(bottom - top, 1)
    if not text or all(char in GLYPHS for char in text) or text in ALWAYS_OUTLINES:
        return True
    if text in OUTLINES:
        return width >= OUTLINES[text] * height
    return all(char in STROKES for char in text) and width >= 2 * height


def without_decorations(fragment: TextFragment) -> TextFragment | None:
    """The fragment less a bullet or swatch at either end (None if nothing else is left); the
    box shrinks by the share of characters removed, so it covers the words alone."""
    if is_decoration(fragment):
        return None
    match = _EDGE_GLYPHS.match(fragment.text)
    assert match is not None  # every string matches: all groups may be empty
    head, body, tail = (len(match.group(1) or ""), match.group(2), len(match.group(3) or ""))
    if not head and not tail:
        return fragment
    total = len(fragment.text)
    start, end = head / total, 1 - tail / total
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = fragment.quad

    def along(a: tuple[float, float], b: tuple[float, float], share: float) -> tuple[float, float]:
        return a[0] + (b[0] - a[0]) * share, a[1] + (b[1] - a[1]) * share

    top_edge, bottom_edge = ((x0, y0), (x1, y1)), ((x3, y3), (x2, y2))
    quad = (
        along(*top_edge, start),
        along(*top_edge, end),
        along(*bottom_edge, end),
        along(*bottom_edge, start),
    )
    return TextFragment(body, quad, fragment.confidence)
