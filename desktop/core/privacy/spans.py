"""The private spans of an OCR result: found line by line, across a line break, and in the
content of QR codes and barcodes; tagged in the result's text."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from desktop.core.privacy.models import TAGS, Match, Span
from desktop.core.privacy.patterns import UserPattern, find_private

if TYPE_CHECKING:  # the app imports this module at start; the OCR's modules wait for first use
    from desktop.core.ocr.models import OcrLine, OcrResult, OcrTable

# Characters of each line's end and the next one's start looked at together: an e-mail or an
# IBAN wrapped onto the next line.
_JOIN_REACH = 48


def find_spans(result: OcrResult, patterns: Sequence[UserPattern] = ()) -> list[Span]:
    """Every private span of the page, line by line (a table row's cells apart), then the
    spans a line break cut in two (one span per line), then the codes'."""
    spans = [
        span
        for number, line in enumerate(result.lines)
        for match in find_private(line.text, patterns)
        for span in _within_cells(number, line.text, match)
    ]
    spans += _across_breaks(result.lines, spans, patterns)
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


def _across_breaks(
    lines: list[OcrLine], found: list[Span], patterns: Sequence[UserPattern]
) -> list[Span]:
    """Spans a line break cuts: the end of a line and the start of the next (same paragraph,
    not a table) read as one, joined with a space and without one (a wrapped e-mail)."""
    spans: list[Span] = []
    for number in range(len(lines) - 1):
        first, second = lines[number], lines[number + 1]
        if first.paragraph != second.paragraph or first.table is not None:
            continue
        if second.table is not None:
            continue
        tail = first.text[-_JOIN_REACH:]
        head = second.text[:_JOIN_REACH]
        offset = len(first.text) - len(tail)
        for joiner in ("", " "):
            for match in find_private(tail + joiner + head, patterns):
                if match.start < len(tail) < match.end - len(joiner):
                    halves = _halves(number, offset, len(tail) + len(joiner), match, tail, head)
                    # a span of its own line reaching the break is whole already
                    if not any(_covered(half, found) for half in halves):
                        spans += halves
    return _unique(spans)


def _halves(
    number: int, offset: int, second_start: int, match: Match, tail: str, head: str
) -> list[Span]:
    """The part of a match on each line, in each line's own characters."""
    spans = []
    left = tail[match.start :]
    if left.strip():
        begin = match.start + len(left) - len(left.lstrip())
        spans.append(
            Span(
                match.kind,
                left.strip(),
                number,
                offset + begin,
                offset + match.start + len(left.rstrip()),
            )
        )
    right = head[: match.end - second_start]
    if right.strip():
        begin = len(right) - len(right.lstrip())
        part = Span(match.kind, right.strip(), number + 1, begin, len(right.rstrip()))
        spans.append(replace(part, continues=bool(spans)))
    return spans


def _unique(spans: list[Span]) -> list[Span]:
    seen: set[tuple[int, int, int]] = set()
    kept = []
    for span in spans:
        if (span.line, span.start, span.end) not in seen:
            seen.add((span.line, span.start, span.end))
            kept.append(span)
    return kept


def _covered(span: Span, found: list[Span]) -> bool:
    return any(
        other.line == span.line and other.start <= span.start and span.end <= other.end
        for other in found
    )


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
