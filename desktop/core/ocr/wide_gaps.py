"""Lines the detector boxed across a column gap, split there (issue 28).

The detector joins text a little over one character apart into one box: an invoice's narrow,
right-aligned Qty column 16 px from its Description ("1 USB-C hub 7-port"), a pack size beside
its unit ("12 box"). The gap is there in the pixels: between words, the ink pauses for about
half a character's pitch (1.3 in a monospaced font); across a column gap, for 1.7 pitches and
more. The recognizer's read is split at such a gap where its characters (their CTC steps) fall
on either side; each part gets its own box, so the layout sees two cells.
"""

from __future__ import annotations

import cv2
import numpy as np

# An ink pause this many mean character pitches wide separates columns, not words.
WIDE_GAP_PITCHES = 1.5
# The split boxes reach this share of the line's height past the ink, as the detector's do.
BOX_MARGIN = 0.1


def ink_columns(crop: np.ndarray) -> np.ndarray:
    """Which columns of a line crop hold ink, looking at the middle half of its height (rules
    and neighbouring lines touch only the top and bottom)."""
    gray = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop
    height = gray.shape[0]
    band = np.ascontiguousarray(gray[height // 4 : height - height // 4])
    if band.size == 0 or int(band.max()) - int(band.min()) < 40:
        return np.zeros(gray.shape[1], bool)
    threshold, _ = cv2.threshold(band, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    dark = band <= threshold
    ink = dark if dark.mean() < 0.5 else ~dark  # the text is the minority either way round
    return ink.any(axis=0)


def wide_gaps(crop: np.ndarray, characters: int) -> list[tuple[int, int]]:
    """(start, end) columns of the ink pauses wide enough to be column gaps."""
    inked = np.flatnonzero(ink_columns(crop))
    if inked.size < 2 or characters < 2:
        return []
    pitch = (inked[-1] - inked[0] + 1) / characters
    jumps = np.flatnonzero(np.diff(inked) > 1)
    gaps = [(int(inked[i]) + 1, int(inked[i + 1])) for i in jumps]
    return [(a, b) for a, b in gaps if b - a >= WIDE_GAP_PITCHES * pitch]


def split_read(
    crop: np.ndarray, text: str, xs: np.ndarray
) -> list[tuple[str, float, float]] | None:
    """The read's parts as (text, left, right) in crop columns, split at its wide gaps; None
    when it has none. `xs`: the crop column of each character of `text`."""
    gaps = wide_gaps(crop, len(text))
    if not gaps:
        return None
    margin = BOX_MARGIN * crop.shape[0]
    parts, start, left = [], 0, 0.0
    for gap_start, gap_end in gaps:
        cut = int(np.count_nonzero(xs < (gap_start + gap_end) / 2))
        if not text[start:cut].strip() or not text[cut:].strip():
            continue  # no character on one side: the recognizer read nothing there
        parts.append((text[start:cut].strip(), left, gap_start + margin))
        start, left = cut, gap_end - margin
    if not parts:
        return None
    return [*parts, (text[start:].strip(), left, float(crop.shape[1]))]


def part_quad(quad: np.ndarray, width: float, left: float, right: float) -> np.ndarray:
    """The piece of a line's quadrilateral between two crop columns (of a crop `width` wide)."""
    start, end = max(left / width, 0.0), min(right / width, 1.0)
    top_left, top_right, bottom_right, bottom_left = quad.astype(np.float32)
    return np.array(
        [
            top_left + (top_right - top_left) * start,
            top_left + (top_right - top_left) * end,
            bottom_left + (bottom_right - bottom_left) * end,
            bottom_left + (bottom_right - bottom_left) * start,
        ],
        dtype=np.float32,
    )
