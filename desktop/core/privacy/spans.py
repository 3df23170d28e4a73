"""The private spans of an OCR result: found line by line, across a line break, and in the
content of QR codes and barcodes; tagged in the result's text."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from desktop.core.privacy.models import TAGS, Match, Span
from desktop.core.privacy.patterns import UserPattern, find_private
from desktop.core.privacy.wrapped import across_breaks, outranked

if TYPE_CHECKING:  # the app imports this module at start; the OCR's modules wait for first use
    from desktop.core.ocr.models import OcrLine, OcrResult, OcrTable


def find_spans(result: OcrResult, patterns: Sequence[UserPattern] = ()) -> list[Span]:
    """Every private span of the page, line by line (a table row's cells apart), then the
    spans a line break cut (one span per line: `wrapped.py`), then the codes'."""
    spans = [
        span
        for number, line in enumerate(result.lines)
        for match in find_private(line.text, patterns)
        for span in _within_cells(number, line.text, match)
    ]
    across = across_breaks(result.lines, spans, patterns)
    spans = [span for span in spans if not outranked(span, across)] + across
    for number, code in enumerate(result.codes):
        spans += [
            Span(m.kind, m.text, -1, m.start, m.end, code=number)
            for m in find_private(code.text, patterns)
        ]
    return spans


def _within_cells(line: int, text: str, match: Match) -> Iterator[Span]:
    """A match cut at the tabs between a table row's cells: each cell's part on its own."""
    start = match.start
    for piece in re.split(r"(\t)", text[match.start : match.end]):
        stripped = piece.strip()
        if stripped and piece != "\t":
            begin = start + piece.index(stripped)
            yield Span(match.kind, stripped, line, begin, begin + len(stripped))
        start += len(piece)


def tag_text(text: str, patterns: Sequence[UserPattern] = ()) -> str:
    """`text` with each private span replaced by its tag: the question sent to a server."""
    return _replaced(text, [(m.start, m.end, TAGS[m.kind]) for m in find_private(text, patterns)])


def _replaced(text: str, cuts: list[tuple[int, int, str]]) -> str:
    out, position = [], 0
    for start, end, tag in sorted(cuts):
        if start < position:
            start = position  # overlapping spans (a line's own and one across its break)
        if end <= start:
            continue
        out += [text[position:start], tag]
        position = end
    return "".join(out) + text[position:]


def tagged(result: OcrResult, spans: Sequence[Span]) -> OcrResult:
    """A copy of the result whose lines, table cells and codes say `[email]` where the spans
    were: the text, Markdown, JSON and every export made from it carry the tags."""
    lines = list(result.lines)
    tables = list(result.tables)
    for number, line in enumerate(result.lines):
        cuts = [(s.start, s.end, s.tag) for s in spans if s.line == number and s.code is None]
        if not cuts:
            continue
        lines[number] = replace(line, text=_replaced(line.text, cuts))
        if line.table is not None and line.table < len(tables):
            tables[line.table] = _table_row_tagged(tables[line.table], line, lines[number])
    codes = list(result.codes)
    for number, code in enumerate(result.codes):
        cuts = [(s.start, s.end, s.tag) for s in spans if s.code == number]
        if cuts:
            codes[number] = replace(code, text=_replaced(code.text, cuts), payload=None)
    return replace(result, lines=lines, tables=tables, codes=codes)


def _table_row_tagged(table: OcrTable, before: OcrLine, after: OcrLine) -> OcrTable:
    old, new = tuple(before.text.split("\t")), tuple(after.text.split("\t"))
    if old not in table.rows or len(old) != len(new):
        return table
    rows = list(table.rows)
    rows[rows.index(old)] = new
    return replace(table, rows=tuple(rows))
