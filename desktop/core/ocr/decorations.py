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
# A toolbar icon on a page without CJK text reads as a lone ideograph or an enclosed numeral
# (a panel toggle as "日", a menu as "三", an arrow as "个", a boxed "T" as "⑦"): a word of that
# one character, or one glued to a capitalised word. (The price: a lone ideograph drawn on a
# page of Latin text, a "①" in an English list, is dropped with them.)
_CJK = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff"
_ICON = f"[{_CJK}\u2460-\u24ff]"
_LONE_ICON = re.compile(rf"(?:^|(?<=\s)){_ICON}(?:\s+|$)|^{_ICON}(?=[A-Z])")
_EDGE_ICONS = re.compile(rf"^({_ICON}\s+|{_ICON}(?=[A-Z]))?(.*?)(\s+{_ICON})?$", re.DOTALL)
_CJK_CHAR = re.compile(f"[{_CJK}]")


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


def without_decorations(fragments: list[TextFragment]) -> list[TextFragment]:
    """The fragments less those that are only a drawn shape, and less a bullet or swatch at
    either end of the others; on a page without CJK text, less the icons read as a lone
    ideograph too."""
    icons = not any(_CJK_CHAR.search(_LONE_ICON.sub("", kept.text)) for kept in fragments)
    kept = (_trimmed(fragment, _EDGE_GLYPHS) for fragment in fragments)
    if icons:
        kept = (_without_icons(fragment) if fragment else None for fragment in kept)
    return [fragment for fragment in kept if fragment is not None]


def _without_icons(fragment: TextFragment) -> TextFragment | None:
    trimmed = _trimmed(fragment, _EDGE_ICONS)
    if trimmed is None or not _LONE_ICON.search(trimmed.text):
        return trimmed
    text = _LONE_ICON.sub("", trimmed.text).strip()  # one between words: the box stays
    return TextFragment(text, trimmed.quad, trimmed.confidence) if text else None


def _trimmed(fragment: TextFragment, edges: re.Pattern[str]) -> TextFragment | None:
    """The fragment less what `edges` matches at either end (None if nothing else is left, or
    if it is a drawn shape); the box shrinks by the share of characters removed, so it covers
    the words alone."""
    if is_decoration(fragment):
        return None
    match = edges.match(fragment.text)
    assert match is not None  # every string matches: all groups may be empty
    head, body, tail = (len(match.group(1) or ""), match.group(2), len(match.group(3) or ""))
    if not head and not tail:
        return fragment
    if not body.strip():
        return None
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
