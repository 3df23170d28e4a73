"""A dash the recognizer read as a dot, told apart by its ink.

A lone "-" in a table cell is a bar a few pixels wide and one or two tall; the recognizer's
choice between "-" and "." for it sits on a knife's edge (FP32 read one serif dash at 0.99,
the INT8 models at 0.13 against 0.79 for "."; a box a pixel different flipped it too). The
ink tells them apart without the model: a full stop is about as wide as tall and sits on the
baseline, a dash is at least twice as wide as tall and sits above it.
"""

from __future__ import annotations

import cv2
import numpy as np

from desktop.core.ocr.ink import ink_mask

# px: a bar beside glyphs is placed by them (a narrow font's 15 px dash: 2 x 1 px of full ink);
# alone, a narrower one may be a dot's antialiasing
MIN_DASH_WIDTH, MIN_LONE_DASH_WIDTH = 2, 3
DASH_ASPECT = 2.0  # width / height a dash has at least
MAX_BAR_SHARE = 0.2  # a dash's height of the line crop's, at most
RAISED_SHARE = 0.2  # how far above the baseline a dash's middle is, of the glyphs' height
APART_SHARE = 0.5  # how far a lone mark stands from any other ink, of the glyphs' height
INK_SHARE = 0.5  # a pixel is ink when it differs from the background by half the crop's range
MIN_SPREAD = 32  # grey levels: a crop differing from its background by less holds no ink
MIN_BODY = 8  # px: the glyphs' height below which their ink is not measured


def dashes_settled(crop: np.ndarray, text: str, columns: np.ndarray | None) -> str:
    """`text` with each "." whose ink is a bar above the baseline turned into "-". `columns`:
    the crop column of each character (`PpOcr._read_lines`); without them only a read of a
    single "." is checked, against the crop's largest blob of ink."""
    if "." not in text or (columns is None and text.strip() != "."):
        return text
    boxes = _ink_boxes(crop)
    height = crop.shape[0]
    if not boxes:
        return text
    if columns is None:
        lone = max(boxes, key=lambda box: box[2] * box[3])
        return text.replace(".", "-") if _is_lone_dash(lone, height) else text
    chars = list(text)
    for position, char in enumerate(chars):
        if char == "." and _is_dash(*_mark_at(boxes, float(columns[position]), height), height):
            chars[position] = "-"
    return "".join(chars)


Box = tuple[int, int, int, int]  # x, y, width, height


def _mark_at(boxes: list[Box], column: float, height: int) -> tuple[Box | None, list[Box]]:
    """The blob read as the character at `column`, and the others; None when no blob lies
    within half the crop's height of it."""
    near = [box for box in boxes if abs(box[0] + box[2] / 2 - column) <= height * 0.5]
    if not near:
        return None, boxes
    mark = min(near, key=lambda box: abs(box[0] + box[2] / 2 - column))
    return mark, [box for box in boxes if box is not mark]


def _ink_boxes(crop: np.ndarray) -> list[Box]:
    """(x, y, width, height) of each connected blob of ink (darker or lighter than the
    background: the crop's median grey, as a line crop is mostly background; its border may
    be a table cell's rule)."""
    ink = ink_mask(crop, share=INK_SHARE, min_spread=MIN_SPREAD).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    return [tuple(int(v) for v in stats[i, :4]) for i in range(1, count)]  # type: ignore[misc]


def _bar(mark: Box, height: int) -> bool:
    """A bar at least DASH_ASPECT times as wide as tall, no wider than the line is tall (an em
    dash) and thin against it (a cell's rule or a frame is not a mark)."""
    _, _, width, tall = mark
    return (
        MIN_DASH_WIDTH <= width <= height
        and width >= DASH_ASPECT * tall
        and tall <= MAX_BAR_SHARE * height
    )


def _is_lone_dash(mark: Box, height: int) -> bool:
    """A crop of one mark: a bar, wide enough not to be a dot's antialiasing."""
    return _bar(mark, height) and mark[2] >= MIN_LONE_DASH_WIDTH


def _is_dash(mark: Box | None, others: list[Box], height: int) -> bool:
    """A bar beside glyphs, with its middle a fifth of their height or more above their
    baseline (a full stop's antialiased ink is a bar too, 2 x 1 px, but on the baseline), and
    standing apart from them by half their height."""
    if mark is None or not others or not _bar(mark, height):
        return False
    _, top, _, tall = mark
    tallest = max(h for _, _, _, h in others)
    bodies = [(y + h, h) for _, y, _, h in others if h >= 0.5 * tallest and h > 2 * tall]
    if not bodies:
        return False
    baseline = float(np.median([bottom for bottom, _ in bodies]))
    body = float(np.median([h for _, h in bodies]))
    if body < MIN_BODY:  # small print breaks into specks at this threshold: no shapes to read
        return False
    if _gap(mark, others) < APART_SHARE * body:  # punctuation against a word: the model's call
        return False
    return baseline - (top + tall / 2) >= max(2.0, RAISED_SHARE * body)


def _gap(mark: Box, others: list[Box]) -> int:
    """Columns between `mark` and the nearest other blob (0 when they overlap)."""
    left, _, width, _ = mark
    return min(max(0, x - (left + width), left - (x + w)) for x, _, w, _ in others)
