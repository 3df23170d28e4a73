"""Private items a line break cuts: the end of a line, up to one short line after it and the
start of the next read as one text, joined with a space and without one (a hyphenated
e-mail), so that a card number or an IBAN wrapped after any of its groups is found whatever
the page's width.

The layout's paragraphs are no guide: the same two lines are one paragraph on a 900-px page
and two on an 1100-px one (the gap it allows grows with the page). Lines are joined when the
second follows the first below it in the same columns; across what the layout calls a
paragraph break only for the kinds whose shape is specific enough (an e-mail, an IBAN's check
digits, a card's Luhn check), not a phone number or the user's own patterns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from desktop.core.privacy.models import Kind, Span
from desktop.core.privacy.patterns import UserPattern, find_private

if TYPE_CHECKING:
    from desktop.core.ocr.models import OcrLine

# Characters of each line's end and the next one's start looked at together.
JOIN_REACH = 48
MAX_LINES = 3  # lines one item may run over (an IBAN in a narrow column), the middle one short
MAX_GAP = 2.0  # line heights between two lines that may be joined across a paragraph break
ACROSS_PARAGRAPHS = frozenset({"email", "iban", "card"})


@dataclass(frozen=True)
class _Piece:
    """A line's characters [start, start + len(text)) in the joined text, from `at`."""

    line: int
    start: int
    text: str
    at: int = 0


def across_breaks(
    lines: Sequence[OcrLine], found: Sequence[Span], patterns: Sequence[UserPattern]
) -> list[Span]:
    """The parts, one span per line, of the items the joined lines hold across a break that
    no span of `found` of the same kind holds whole already."""
    spans: list[Span] = []
    for first in range(len(lines) - 1):
        for count in range(2, MAX_LINES + 1):
            chain = list(range(first, first + count))
            if chain[-1] >= len(lines) or not all(_follows(lines, n) for n in chain[1:]):
                break
            if count > 2 and len(lines[chain[1]].text) > JOIN_REACH:
                break
            same = len({lines[n].paragraph for n in chain}) == 1
            for joiner in ("", " "):
                spans += _joined_spans(lines, chain, joiner, same, found, patterns)
    return _unique(spans)


def _follows(lines: Sequence[OcrLine], number: int) -> bool:
    """Line `number` is the next line of text below line `number - 1` in its columns."""
    above, below = lines[number - 1], lines[number]
    if above.table is not None or below.table is not None:
        return False
    if above.paragraph == below.paragraph:
        return True
    height = max(above.box[3] - above.box[1], 1)
    gap = below.box[1] - above.box[3]
    shared = min(above.box[2], below.box[2]) - max(above.box[0], below.box[0])
    return -height / 2 <= gap <= MAX_GAP * height and shared > 0


def _joined_spans(
    lines: Sequence[OcrLine],
    chain: list[int],
    joiner: str,
    same_paragraph: bool,
    found: Sequence[Span],
    patterns: Sequence[UserPattern],
) -> list[Span]:
    pieces, position = [], 0
    for order, number in enumerate(chain):
        text = lines[number].text
        start = max(len(text) - JOIN_REACH, 0) if order == 0 else 0
        end = min(len(text), JOIN_REACH) if order == len(chain) - 1 else len(text)
        pieces.append(_Piece(number, start, text[start:end], position))
        position += end - start + len(joiner)
    joined = joiner.join(piece.text for piece in pieces)
    spans: list[Span] = []
    for match in find_private(joined, patterns):
        # it must start on the first line and reach past the joiner into the last
        if not (match.start < pieces[0].at + len(pieces[0].text) and pieces[-1].at < match.end):
            continue
        if not same_paragraph and match.kind not in ACROSS_PARAGRAPHS:
            continue
        parts = _parts(match.kind, match.start, match.end, joined, pieces)
        if not any(_covered(part, found) for part in parts):  # whole on its own line
            spans += parts
    return spans


def _parts(kind: Kind, start: int, end: int, joined: str, pieces: list[_Piece]) -> list[Span]:
    """The match's characters on each line, in each line's own characters."""
    parts: list[Span] = []
    for piece in pieces:
        low, high = max(start, piece.at), min(end, piece.at + len(piece.text))
        text = joined[low:high]
        if not text.strip():
            continue
        low += len(text) - len(text.lstrip())
        high -= len(text) - len(text.rstrip())
        begin = piece.start + low - piece.at
        part = Span(kind, joined[low:high], piece.line, begin, begin + high - low)
        parts.append(replace(part, continues=bool(parts)))
    return parts


def _unique(spans: list[Span]) -> list[Span]:
    seen: set[tuple[int, int, int]] = set()
    kept = []
    for span in spans:
        if (span.line, span.start, span.end) not in seen:
            seen.add((span.line, span.start, span.end))
            kept.append(span)
    return kept


def _covered(span: Span, found: Sequence[Span]) -> bool:
    """Held by a span of the same kind on its line: the item is whole there already."""
    return any(
        other.kind == span.kind
        and other.line == span.line
        and other.start <= span.start
        and span.end <= other.end
        for other in found
    )


def outranked(span: Span, across: Sequence[Span]) -> bool:
    """A line's span inside a part of an item of another kind found across a break: digits
    of a wrapped IBAN read as a phone number on their own line."""
    return any(
        part.kind != span.kind
        and part.line == span.line
        and part.start <= span.start
        and span.end <= part.end
        for part in across
    )
