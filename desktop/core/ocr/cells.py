"""What a table cell is to a spreadsheet, in one place for the .xlsx, CSV and TSV writers.

A cell is a number only when its text is exactly one ("42", "-3", "12.50"), or an amount with
thousands separators ("5,208.16", "5.208,16") in a column whose cells agree on which separator
is the decimal one (column_numbers); everything else is text as it was read. In CSV and TSV (a
file, or the clipboard pasted into a sheet) text that a spreadsheet would run as a formula, a
cell that starts with =, +, -, @, a tab or a carriage return ("=HYPERLINK(...)" printed in a
hostile screenshot), gets a leading apostrophe:
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


# Amounts with thousands separators, in the two conventions: "5,208.16" and "5.208,16".
_POINT_GROUPED = re.compile(r"-?[1-9]\d{0,2}(?:,\d{3})+(?:\.(\d{1,6}))?")
_COMMA_GROUPED = re.compile(r"-?[1-9]\d{0,2}(?:\.\d{3})+(?:,(\d{1,6}))?")
_COMMA_DECIMAL = re.compile(r"-?(?:0|[1-9]\d{0,13}),(\d{1,6})")
Number = tuple[int | float, str | None]  # (value, number format)


def number_of(text: str) -> Number | None:
    """(value, number format) when the text is exactly a number, else None."""
    if _INTEGER.fullmatch(text):
        return int(text), None
    decimal = _DECIMAL.fullmatch(text)
    if decimal:
        return float(text), "0." + "0" * len(decimal.group(1))
    return None


def column_numbers(texts: Sequence[str]) -> list[Number | None]:
    """Each cell of one column as a number, or None for text. Plain numbers ("42", "12.50")
    always are; an amount with thousands separators ("5,208.16", "5.208,16", "208,16") is
    one when the column's cells agree on the convention: a point-decimal column ("5,208.16",
    "523.20") or a comma-decimal one ("5.208,16", "523,20"). Cells that only one reading fits
    ("1,234": a thousand or one point two?) follow the column; a column with cells of both
    conventions, or none that decides, keeps them as text."""
    point = any(_POINT_GROUPED.fullmatch(t) and "." in t or _decides_point(t) for t in texts)
    comma = any(_COMMA_GROUPED.fullmatch(t) and "," in t or _decides_comma(t) for t in texts)
    if point == comma:  # both (they disagree) or neither (nothing decides)
        return [number_of(text) for text in texts]
    return [_grouped(text, point) for text in texts]


def _decides_point(text: str) -> bool:
    """A plain decimal that is no group of thousands: "523.20", "0.5" (not "1.234")."""
    return _decides(_DECIMAL.fullmatch(text))


def _decides_comma(text: str) -> bool:
    """A comma decimal that is no group of thousands: "523,20", "0,5" (not "1,234")."""
    return _decides(_COMMA_DECIMAL.fullmatch(text))


def _decides(decimal: re.Match[str] | None) -> bool:
    if decimal is None:
        return False
    return len(decimal.group(1)) != 3 or decimal.group(0).lstrip("-").startswith("0")


def _grouped(text: str, point_decimal: bool) -> Number | None:
    """The cell read in the column's convention; "#,##0.00" shows it with its separators in
    the reader's locale."""
    group, decimal = (",", ".") if point_decimal else (".", ",")
    pattern = _POINT_GROUPED if point_decimal else _COMMA_GROUPED
    plain = _INTEGER.fullmatch(text) or (
        _DECIMAL.fullmatch(text) if point_decimal else _COMMA_DECIMAL.fullmatch(text)
    )
    if not (pattern.fullmatch(text) or plain):
        return None
    digits = text.replace(group, "").replace(decimal, ".")
    number = number_of(digits)
    if number is None or not pattern.fullmatch(text):
        return number  # a plain number, or one beyond a double's exact digits (None)
    value, number_format = number
    return value, "#,##" + (number_format or "0")


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
