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

# px: a bar beside glyphs is placed by them (a narrow font's 15 px dash: 2 x 1 px of full ink);
# alone, a narrower one may be a dot's antialiasing
MIN_DASH_WIDTH, MIN_LONE_DASH_WIDTH = 2, 3
DASH_ASPECT = 2.0  # width / height a dash has at least
RAISED_SHARE = 0.2  # how far above the baseline a dash's middle is, of the glyphs' height
APART_SHARE = 0.5  # how far a lone mark stands from any other ink, of the glyphs' height
INK_SHARE = 0.5  # a pixel is ink when it differs from the background by half the crop's range
MIN_BODY = 8  # px: the glyphs' height below which their ink is not measured


def dashes_settled(crop: np.ndarray, text: str, columns: np.ndarray | None) -> str:
    """`text` with each "." whose ink is a bar above the baseline turned into "-". `columns`:
    the crop column of each character (`PpOcr._read_lines`); without them only a read of a
    single "." is checked, against all of the crop's ink."""
    if "." not in text:
        return text
    if columns is None and text.strip() != ".":
        return text
    boxes = _ink_boxes(crop)
    if not boxes:
        return text
    chars = list(text)
    for position, char in enumerate(chars):
        if char == "." and _is_dash(
            *_mark_at(boxes, None if columns is None else columns[position], crop.shape[0])
        ):
            chars[position] = "-"
    return "".join(chars)


Box = tuple[int, int, int, int]  # x, y, width, height


def _mark_at(boxes: list[Box], column: float | None, height: int) -> tuple[Box | None, list[Box]]:
    """The blob read as the character at `column` (the largest one for a lone read), and the
    others; None when no blob lies within half the crop's height of it."""
    if column is None:
        return max(boxes, key=lambda box: box[2] * box[3]), []
    near = [box for box in boxes if abs(box[0] + box[2] / 2 - column) <= height * 0.5]
    if not near:
        return None, boxes
    mark = min(near, key=lambda box: abs(box[0] + box[2] / 2 - column))
    return mark, [box for box in boxes if box is not mark]


def _ink_boxes(crop: np.ndarray) -> list[Box]:
    """(x, y, width, height) of each connected blob of ink (darker or lighter than the
    background, which is the median of the crop's border)."""
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    gray = gray.astype(np.int16)
    border = np.concatenate([gray[0], gray[-1], gray[:, 0], gray[:, -1]])
    distance = np.abs(gray - int(np.median(border)))
    spread = int(distance.max())
    if spread < 32:  # no ink to speak of
        return []
    ink = (distance >= spread * INK_SHARE).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    return [tuple(int(v) for v in stats[i, :4]) for i in range(1, count)]  # type: ignore[misc]


def _is_dash(mark: Box | None, others: list[Box]) -> bool:
    """A bar at least DASH_ASPECT times as wide as tall, and, where there are glyphs beside
    it, with its middle a fifth of their height or more above their baseline (a full stop's
    antialiased ink is a bar too, 2 x 1 px, but on the baseline)."""
    if mark is None:
        return False
    _, top, width, height = mark
    if width < MIN_DASH_WIDTH or width < DASH_ASPECT * height:
        return False
    if not others:  # a crop of the mark alone
        return width >= MIN_LONE_DASH_WIDTH
    tallest = max(h for _, _, _, h in others)
    bodies = [(y + h, h) for _, y, _, h in others if h >= 0.5 * tallest and h > 2 * height]
    if not bodies:
        return False
    baseline = float(np.median([bottom for bottom, _ in bodies]))
    body = float(np.median([h for _, h in bodies]))
    if body < MIN_BODY:  # small print breaks into specks at this threshold: no shapes to read
        return False
    if _gap(mark, others) < APART_SHARE * body:  # punctuation against a word: the model's call
        return False
    return baseline - (top + height / 2) >= max(2.0, RAISED_SHARE * body)


def _gap(mark: Box, others: list[Box]) -> int:
    """Columns between `mark` and the nearest other blob (0 when they overlap)."""
    left, _, width, _ = mark
    return min(max(0, x - (left + width), left - (x + w)) for x, _, w, _ in others)
