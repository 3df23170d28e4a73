"""Untrusted text made safe for a terminal: what a server, a file name, a QR code or a model's
answer says is shown, never run. Control characters (ESC starts a title change or a screen
clear; CR rewrites a line) and bidi overrides (`invoice\\u202efdp.exe` shows as "invoiceexe.pdf")
are written as visible escapes: `\\x1b`, `\\r`, `\\u202e`. Line breaks and tabs stay when the
text is several lines (an answer), and are escaped too in a one-line item (a name, an id).
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the bidi embeddings, overrides, isolates and marks.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_BUT_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def terminal_text(text: str, *, lines: bool = True) -> str:
    """`text` with its control and bidi-override characters made visible; `lines`: keep
    newlines and tabs (an answer, a sentence over lines), else escape them (a name, an id)."""
    pattern = _UNSAFE_BUT_LINES if lines else _UNSAFE
    return pattern.sub(_visible, text)


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x0D:
        return "\\r"
    if code == 0x0A:
        return "\\n"
    if code == 0x09:
        return "\\t"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
