"""Where a span of an OCR line lies on the page, in pixels.

The OCR boxes lines (and table cells: `text_layer.runs` gives each cell's box), not words. A
run's words are found in its ink: the columns of its middle band that hold ink, split at the
widest pauses, as many as the read has word breaks. When the widest pauses stand clear of the
rest and each piece's width agrees with its word's (the characters' advance widths), the
pieces are the words' boxes; otherwise the span is placed by the characters' widths along
the run's ink with a generous margin (`Span.estimated`). A span that starts or ends inside a
word ("Mail:jo@x.org") is cut there by the characters' widths, reaching into the rest.
Every box is grown by a few pixels (anti-aliased edges) and over glyph parts that stick out
of the line's box (descenders, accents), never more than a third of the line's height, and
never into the text of the lines above and below (`between_lines`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from PIL import Image

from desktop.core.ocr.ink import ink_mask
from desktop.core.ocr.models import OcrResult
from desktop.core.ocr.text_layer import Run, advance, ink_finder, runs
from desktop.core.privacy.models import Box, Span

MIN_SPREAD = 40  # grey levels from darkest to lightest below which a crop holds no ink
BAND = 0.2  # share of a run's height left out at its top and bottom when looking for pauses
PAD = 0.12  # share of the line's height every box is grown by (at least MIN_PAD px)
MIN_PAD = 2
ESTIMATE_MARGIN = 0.5  # line heights added on each side of a span placed by widths
PARTIAL_MARGIN = 0.3  # line heights a cut inside a word reaches into the rest of it
PAST_ESTIMATE = 0.3  # share of that reach a pause may lie on the value's side of the estimate
WIDTH_AGREEMENT = (0.55, 1.8)  # a word's ink width over its expected width, to trust a split
REACH = 1 / 3  # how far past its line's box a box may grow over ink sticking out
INK_CONTRAST = 40  # grey levels from the background that count as ink when growing a box
RULE_COVER = 0.8  # a row inked over this share of a box's width is a drawn rule
NARROW_MARK = 0.3  # line heights: the widest ink of a ":" "," "." ";" between two pauses
_MARKS = frozenset(":;,.!?)'\"")
CODE_PAD = 4  # px around a QR code's or a barcode's box


def place(spans: Sequence[Span], result: OcrResult, image: Image.Image) -> list[Span]:
    """The spans with their boxes on `image` (the page the OCR read)."""
    gray = np.asarray(image.convert("L"))
    by_line: dict[int, list[tuple[Run, int]]] = {}
    for run, offset in _runs_with_offsets(result, image):
        by_line.setdefault(run.line, []).append((run, offset))
    placed = []
    for span in spans:
        if span.code is not None:
            box = _grown(result.codes[span.code].box, CODE_PAD, gray.shape)
            placed.append(replace(span, boxes=(box,)))
            continue
        boxes, estimated = [], False
        for run, offset in by_line.get(span.line, []):
            start, end = max(span.start - offset, 0), min(span.end - offset, len(run.text))
            if start < end:
                box, guessed = _span_box(gray, run, start, end)
                boxes.append(between_lines(box, span.line, result))
                estimated |= guessed
        if not boxes:  # a line no run covers: the whole line
            boxes, estimated = [_grown(result.lines[span.line].box, MIN_PAD, gray.shape)], True
        placed.append(replace(span, boxes=tuple(boxes), estimated=estimated))
    return placed


def covered_words(
    result: OcrResult, image: Image.Image, boxes: Sequence[Box]
) -> list[tuple[int, int, int]]:
    """(line, start, end) of each stretch of the result's words that `boxes` cover on `image`
    (a word placed by the characters' widths along its run's ink): text filled in a later
    round, which the result may hold garbled ("jo@x,org"), must not stay in its text."""
    gray = np.asarray(image.convert("L"))
    stretches = []
    for run, offset in _runs_with_offsets(result, image):
        left, top, right, bottom = run.box
        near = [b for b in boxes if same_rows(run.box, b) and b[0] < right and left < b[2]]
        if not near:
            continue
        crop = gray[top:bottom, left:right]
        covered = []
        for word in re.finditer(r"\S+", run.text):
            x0, x1 = _by_widths(crop, run.text, *word.span())
            if any(b[0] < left + x1 and left + x0 < b[2] for b in near):
                covered.append(word.span())
        for start, end in _stretches(covered, run.text):
            stretches.append((run.line, offset + start, offset + end))
    return stretches


def _stretches(words: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Words next to each other (only spaces between them) joined into one stretch."""
    joined: list[tuple[int, int]] = []
    for start, end in words:
        if joined and not text[joined[-1][1] : start].strip():
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def same_rows(a: Box, b: Box) -> bool:
    """Two boxes share at least half the height of the shorter one."""
    shared = min(a[3], b[3]) - max(a[1], b[1])
    return shared >= min(a[3] - a[1], b[3] - b[1]) / 2


def between_lines(box: Box, line: int, result: OcrResult) -> Box:
    """The box kept off the text of the lines above and below it (those it shares columns
    with): no further than midway across the gap between the two line boxes, or, where they
    overlap (a terminal's tight lines), midway between their middles."""
    left, top, right, bottom = box
    own = result.lines[line].box
    middle = (own[1] + own[3]) / 2
    for number, other in enumerate(result.lines):
        edge = other.box
        if number == line or edge[2] <= left or edge[0] >= right:
            continue
        centre = (edge[1] + edge[3]) / 2
        if centre < middle:
            limit = (edge[3] + own[1]) / 2 if edge[3] <= own[1] else (centre + middle) / 2
            top = max(top, math.ceil(limit))
        elif centre > middle:
            limit = (own[3] + edge[1]) / 2 if own[3] <= edge[1] else (centre + middle) / 2
            bottom = min(bottom, math.floor(limit))
    return left, top, right, max(bottom, top + 1)


def _runs_with_offsets(result: OcrResult, image: Image.Image) -> list[tuple[Run, int]]:
    """Each run with where its text starts in its line's text (a cell after the tabs)."""
    found = []
    cursor: dict[int, int] = {}
    for run in runs(result, ink_finder(image)):
        text = result.lines[run.line].text
        if run.text == text.replace("\t", " "):  # the whole line on its box (tabs as spaces)
            found.append((run, 0))
            continue
        offset = text.find(run.text, cursor.get(run.line, 0))
        if offset < 0:
            continue
        cursor[run.line] = offset + len(run.text)
        found.append((run, offset))
    return found


def _span_box(gray: np.ndarray, run: Run, start: int, end: int) -> tuple[Box, bool]:
    left, top, right, bottom = run.box
    height = max(bottom - top, 1)
    words = [(m.start(), m.end()) for m in re.finditer(r"\S+", run.text)]
    pieces = word_columns(gray[top:bottom, left:right], run.text, words)
    if pieces is None:
        x0, x1 = _by_widths(gray[top:bottom, left:right], run.text, start, end)
        margin = ESTIMATE_MARGIN * height
        box = (round(left + x0 - margin), top, round(left + x1 + margin), bottom)
        return _finished(gray, box), True
    inside = [n for n, (a, b) in enumerate(words) if a < end and start < b]
    first, last = inside[0], inside[-1]
    x0, x1 = float(pieces[first][0]), float(pieces[last][1])
    if start > words[first][0] or end < words[last][1]:
        crop = gray[top:bottom, left:right]
        blank = np.asarray(~ink_mask(crop, otsu=True, min_spread=MIN_SPREAD).any(axis=0))
        reach, pad = PARTIAL_MARGIN * height, max(MIN_PAD, round(PAD * height))
        if start > words[first][0]:
            x0 = _cut_at_pause(
                blank, _cut(run.text, words[first], pieces[first], start), -reach, pad
            )
        if end < words[last][1]:
            x1 = _cut_at_pause(blank, _cut(run.text, words[last], pieces[last], end), reach, -pad)
    return _finished(gray, (round(left + x0), top, round(left + x1), bottom)), False


def _cut_at_pause(blank: np.ndarray, x: float, reach: float, pad: int) -> float:
    """Where a span starting (`reach` < 0) or ending inside a word is cut: at the nearest pause
    in the ink within `reach` of the widths' estimate, on its kept side (less the padding the
    box gets later, so the kept glyph stays whole: "<" of "<jo@x.org>"); else the estimate
    moved `reach` into the kept side."""
    # mostly on the kept side: a pause past the estimate may be one inside the value
    spare = abs(reach) * PAST_ESTIMATE
    low, high = (x + reach, x + spare) if reach < 0 else (x - spare, x + reach)
    low, high = max(int(low), 0), min(int(high) + 1, blank.size)
    columns = [c for c in range(low, high) if blank[c]]
    if not columns:
        return x + reach
    nearest = min(columns, key=lambda c: abs(c - x))
    edge = nearest
    step = -1 if reach < 0 else 1  # walk to the pause's kept end
    while 0 <= edge + step < blank.size and blank[edge + step]:
        edge += step
    return float(edge + (0 if reach < 0 else 1)) + pad


def word_columns(
    crop: np.ndarray, text: str, words: Sequence[tuple[int, int]]
) -> list[tuple[int, int]] | None:
    """Each word's [first, last + 1) ink columns in the crop, or None where the ink does not
    clearly hold that many words of those widths. The word breaks are the widest pauses when
    they stand clear of the rest, else (a monospaced face pauses as long inside a word as
    between words) the widest pause near where the characters' widths put each break."""
    height = crop.shape[0]
    cut = round(height * BAND)
    inked = ink_mask(crop[cut : height - cut], otsu=True, min_spread=MIN_SPREAD).any(axis=0)
    columns = np.flatnonzero(inked)
    if columns.size == 0 or not words:
        return None
    jumps = np.flatnonzero(np.diff(columns) > 1)
    gaps = [(int(columns[i]) + 1, int(columns[i + 1])) for i in jumps]
    first, last = int(columns[0]), int(columns[-1]) + 1
    for breaks in (_widest(gaps, len(words) - 1), _near(gaps, text, words, first, last, height)):
        if breaks is None:
            continue
        edges = [first, *[x for gap in breaks for x in gap], last]
        pieces = [(edges[2 * n], edges[2 * n + 1]) for n in range(len(words))]
        if _widths_agree(text, words, pieces):
            return pieces
    return None


def _widest(gaps: list[tuple[int, int]], need: int) -> list[tuple[int, int]] | None:
    widest = sorted(gaps, key=_width, reverse=True)
    if len(gaps) < need or (
        len(gaps) > need and need and _width(widest[need - 1]) <= _width(widest[need])
    ):
        return None
    return sorted(widest[:need])


def _near(
    gaps: list[tuple[int, int]],
    text: str,
    words: Sequence[tuple[int, int]],
    first: int,
    last: int,
    height: int,
) -> list[tuple[int, int]] | None:
    """For each break between words, the widest pause within a character and a half of where
    the characters' widths put it (of pauses within a pixel of that width, the nearest); None
    if one has none."""
    total = max(_advance(text.strip()), 1.0)
    start = len(text) - len(text.lstrip())
    pitch = (last - first) / max(len(text.strip()), 1)
    breaks: list[tuple[int, int]] = []
    for (_, end), (begin, _) in zip(words, words[1:], strict=False):
        before = _advance(text[start:end]) + _advance(text[end:begin]) / 2
        expected = first + before / total * (last - first)
        near = [
            g
            for g in gaps
            if abs((g[0] + g[1]) / 2 - expected) <= 1.5 * pitch
            and (not breaks or g[0] > breaks[-1][0])
        ]
        if not near:
            return None
        widest = max(_width(g) for g in near)  # a pixel narrower is as wide (anti-aliasing)
        tied = [g for g in near if _width(g) >= widest - 1]
        chosen = min(tied, key=lambda g: abs((g[0] + g[1]) / 2 - expected))
        breaks.append(_after_mark(tied, chosen, text[end - 1], height))
    return breaks


def _after_mark(
    tied: list[tuple[int, int]], chosen: tuple[int, int], last_char: str, height: int
) -> tuple[int, int]:
    """A word ending in a mark ("IBAN:") ends after it: where the pause before the mark is as
    wide as the one after it (a serif colon's bearings), the later pause when only a narrow
    blob of ink stands between them."""
    if last_char not in _MARKS:
        return chosen
    later = [g for g in tied if g[0] > chosen[1] and g[0] - chosen[1] <= NARROW_MARK * height]
    return later[0] if later else chosen


def _width(gap: tuple[int, int]) -> int:
    return gap[1] - gap[0]


def _widths_agree(
    text: str, words: Sequence[tuple[int, int]], pieces: Sequence[tuple[int, int]]
) -> bool:
    expected = [_advance(text[a:b]) for a, b in words]
    found = [b - a for a, b in pieces]
    scale = sum(found) / max(sum(expected), 1)
    low, high = WIDTH_AGREEMENT
    return all(
        b - a < 2 or low <= width / max(want * scale, 1e-6) <= high
        for (a, b), width, want in zip(words, found, expected, strict=True)
    )


def _advance(text: str) -> float:
    return float(sum(advance(char) for char in text))


def _cut(text: str, word: tuple[int, int], piece: tuple[int, int], at: int) -> float:
    """The column where character `at` of a word starts, by the characters' widths."""
    share = _advance(text[word[0] : at]) / max(_advance(text[word[0] : word[1]]), 1.0)
    return piece[0] + share * (piece[1] - piece[0])


def _by_widths(crop: np.ndarray, text: str, start: int, end: int) -> tuple[float, float]:
    """Characters [start, end) placed along the run's ink by their widths."""
    inked = np.flatnonzero(ink_mask(crop, otsu=True, min_spread=MIN_SPREAD).any(axis=0))
    first, last = (int(inked[0]), int(inked[-1]) + 1) if inked.size else (0, crop.shape[1])
    total = max(_advance(text), 1.0)
    x0 = first + _advance(text[:start]) / total * (last - first)
    x1 = first + _advance(text[:end]) / total * (last - first)
    return x0, x1


def _finished(gray: np.ndarray, box: Box) -> Box:
    """The box drawn in to the text's rows, grown over ink sticking out above and below,
    then padded."""
    left, top, right, bottom = box
    # on the page, a pixel each way at least: a PDF's text run may lie off it or be 0.1 pt
    top, bottom = min(max(top, 0), gray.shape[0] - 1), min(max(bottom, 1), gray.shape[0])
    bottom = max(bottom, top + 1)
    height = bottom - top
    reach = max(round(height * REACH), 1)
    left, right = max(left, 0), min(right, gray.shape[1])
    columns = gray[:, left:right].astype(np.int16)
    if columns.size:
        background = int(np.median(columns[max(top, 0) : bottom]))
        ink = np.abs(columns - background) > INK_CONTRAST
        inked = ink.any(axis=1) & (ink.mean(axis=1) < RULE_COVER)  # a drawn rule is no text
        rows = np.flatnonzero(inked[top:bottom])
        if rows.size:  # in to the text first: a table cell's box is its grid rectangle
            top, bottom = top + int(rows[0]), top + int(rows[-1]) + 1
        floor = max(top - reach, 0)
        while top > floor and inked[top - 1]:
            top -= 1
        ceiling = min(bottom + reach, gray.shape[0])
        while bottom < ceiling and inked[bottom]:
            bottom += 1
    pad = max(MIN_PAD, round(PAD * height))
    return _grown((left, top, right, bottom), pad, gray.shape)


def _grown(box: Box, pad: int, shape: tuple[int, ...]) -> Box:
    left, top, right, bottom = box
    height, width = shape[0], shape[1]
    return (
        max(left - pad, 0),
        max(top - pad, 0),
        min(right + pad, width),
        min(bottom + pad, height),
    )
