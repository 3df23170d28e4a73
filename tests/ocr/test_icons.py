"""Toolbar icons the recognizer reads as a lone ideograph or an enclosed numeral ("日" for a
panel toggle, "⑦" for a boxed "T", "三" for a menu) are not text on a page of Latin text, and
stay text where the page is written in CJK (desktop/core/ocr/decorations.py)."""

from __future__ import annotations

from desktop.core.ocr.layout import arrange
from desktop.core.ocr.models import TextFragment


def fragment(text: str, left: int, top: int, width: int | None = None) -> TextFragment:
    return TextFragment.from_box(text, (left, top, left + (width or 9 * len(text)), top + 18))


def texts(fragments: list[TextFragment]) -> list[str]:
    return [line.text for line in arrange(fragments).lines]


def test_icons_on_a_latin_page_are_dropped() -> None:
    toolbar = fragment("日 New chat", 270, 10, 110)  # the panel toggle boxed with the title
    layout = arrange(
        [
            toolbar,
            fragment("⑦Extract text from all", 600, 10),
            fragment("三", 900, 10, 18),  # a menu icon on its own
            fragment("Ask AI: Extract text 个 Send", 300, 300),
            fragment("The invoice is due on 13 April.", 300, 80),
        ]
    )
    assert [line.text for line in layout.lines] == [
        "New chat Extract text from all",
        "The invoice is due on 13 April.",
        "Ask AI: Extract text Send",
    ]
    assert layout.lines[0].box[0] > toolbar.box[0]  # the box shrank off the icon


def test_the_same_characters_on_a_cjk_page_are_text() -> None:
    lines = ["日 本月的发票", "三 请在周五之前付款", "⑦ 第七条"]
    assert texts([fragment(line, 20, 30 * row) for row, line in enumerate(lines)]) == lines


def test_a_lone_ideograph_inside_a_word_is_not_an_icon() -> None:
    # Glued to lower-case letters it is part of the read, not a toolbar icon before a label.
    assert texts([fragment("Total本due", 20, 0), fragment("日 Settings", 20, 40)]) == [
        "Total本due",
        "日 Settings",  # the page has CJK text (the word above), so nothing is dropped
    ]
