"""What a table cell is to a spreadsheet, in one place for the .xlsx, CSV and TSV writers.

A cell is a number only when its text is exactly one ("42", "-3", "12.50"); everything else
is text as it was read. In CSV and TSV (a file, or the clipboard pasted into a sheet) text that
a spreadsheet would run as a formula, a cell that starts with =, +, -, @, a tab or a carriage
return ("=HYPERLINK(...)" printed in a hostile screenshot), gets a leading apostrophe:
spreadsheets take it as "this is text" and do not show it (OWASP's advice on CSV injection).
The .xlsx marks such cells as text instead, and JSON and Markdown keep the text untouched.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence

# 15 significant digits: what a spreadsheet's double holds exactly.
_INTEGER = re.compile(r"-?(?:0|[1-9]\d{0,14})")
_DECIMAL = re.compile(r"-?(?:0|[1-9]\d{0,13})\.(\d{1,6})")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def number_of(text: str) -> tuple[int | float, str | None] | None:
    """(value, number format) when the text is exactly a number, else None."""
    if _INTEGER.fullmatch(text):
        return int(text), None
    decimal = _DECIMAL.fullmatch(text)
    if decimal:
        return float(text), "0." + "0" * len(decimal.group(1))
    return None


def inert(text: str) -> str:
    """The cell as CSV/TSV writes it: a would-be formula gets a leading apostrophe; numbers
    ("-3") and all other text stay as they are."""
    if text.startswith(FORMULA_STARTS) and number_of(text) is None:
        return "'" + text
    return text


def delimited(rows: Iterable[Sequence[str]], dialect: str = "excel") -> str:
    """The rows as CSV ("excel") or TSV ("excel-tab"), quoted where a cell needs it, every
    cell made inert."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, dialect=dialect, lineterminator="\n")
    writer.writerows([inert(cell) for cell in row] for row in rows)
    return buffer.getvalue()
