"""terminal_text: control characters and bidi overrides are shown as escapes, never run."""

from __future__ import annotations

import pytest

from desktop.core.terminal_text import terminal_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;title\x07", r"\x1b]0;title\x07"),
        ("\x1b[2J\x1b[H", r"\x1b[2J\x1b[H"),
        ("invoice\u202efdp.exe", r"invoice\u202efdp.exe"),
        ("a\u2066b\u2069c\u200f", r"a\u2066b\u2069c\u200f"),
        ("over\rwrite", r"over\rwrite"),
        ("\x9b31m C1 CSI \x7f", r"\x9b31m C1 CSI \x7f"),
        ("\x00nul", r"\x00nul"),
        ("plain ünïcödé 日本 ✓", "plain ünïcödé 日本 ✓"),
    ],
)
def test_unsafe_characters_become_visible_escapes(raw: str, shown: str) -> None:
    assert terminal_text(raw) == shown
    assert terminal_text(raw, lines=False) == shown


def test_lines_and_tabs_stay_in_text_and_are_escaped_in_a_name() -> None:
    assert terminal_text("one\n\ttwo") == "one\n\ttwo"
    assert terminal_text("one\n\ttwo", lines=False) == r"one\n\ttwo"
