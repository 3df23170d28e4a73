"""Line crops looked at again after the recognizer read them (issue 28): what a detector box
hides about table cells.

* Lines boxed across a column gap are split there. The detector joins text a little over one
  character apart into one box: an invoice's narrow, right-aligned Qty column 16 px from its
  Description ("1 USB-C hub 7-port"), a pack size beside its unit ("12 box"). Between words
  the ink pauses for about half a character's pitch (1.3 in a monospaced font); across a
  column gap, for 1.7 pitches and more. The read is split at such a gap where its characters
  (their CTC steps) fall on either side; each part gets its own box.
* Boxes are drawn in to their ink, so that close columns keep their gap.
* A crop of one or two characters is also read with a margin (`with_margin`).
* A lone letter whose small and capital forms differ only in size takes its case from its
  height (`letter_case`).
* A dimension's "x" read as "×" beside an "x" of the same line is made an "x"
  (`consistent_times`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import cv2
import numpy as np

from desktop.core.ocr.ink import ink_mask
from desktop.core.ocr.models import TextFragment

# An ink pause this many mean character pitches wide separates columns, not words.
WIDE_GAP_PITCHES = 1.5
# Lines of this many glyphs or fewer are split at gaps this many times their ink's height.
FEW_GLYPHS = 3
FEW_GLYPHS_GAP = 1.1
# The split boxes reach this share of the line's height past the ink, as the detector's do.
BOX_MARGIN = 0.1
# Ink at a crop's edge narrower than this share of its height, apart from the rest by as
# much, belongs to a neighbour.
SLIVER = 0.3
# Grey levels from a crop's darkest to its lightest below which it holds no ink.
MIN_SPREAD = 40
# A crop row inked over this share of its width is a drawn rule, not text.
RULE_COVER = 0.8
# A crop this many times taller than its text and margins is drawn in to them, to no less
# than this share of its height.
TALL_CROP = 1.6
MIN_TRIMMED = 0.5


class Part(NamedTuple):
    """A piece of a read and where it lies in the line's crop, in pixels."""

    text: str
    left: float
    right: float
    top: float
    bottom: float


def ink_columns(crop: np.ndarray, *, whole: bool = False) -> np.ndarray:
    """Which columns of a line crop hold ink, looking at the middle half of its height (rules
    and neighbouring lines touch only the top and bottom), or with `whole` at all of it."""
    height = crop.shape[0]
    band = crop if whole else crop[height // 4 : height - height // 4]
    return np.asarray(ink_mask(band, otsu=True, min_spread=MIN_SPREAD).any(axis=0))


def text_rows(crop: np.ndarray, *, ruled: bool = False) -> tuple[float, float] | None:
    """(top, bottom) of the text in a crop much taller than it, grown by the detector's usual
    margin; None for a crop of the usual height (and with `ruled`, for one that no drawn rule
    runs through). A dark grid's faint row rules made the
    detector box 14 px text 41 px tall, across two rows, which then read as one."""
    height = crop.shape[0]
    ink = ink_mask(crop, otsu=True, min_spread=MIN_SPREAD)
    if not ink.any():
        return None
    cover = ink.mean(axis=1)
    rules = cover >= RULE_COVER
    if ruled and not rules.any():
        return None
    cover[rules] = 0  # a drawn rule, not text
    best = _heaviest_run(cover)
    if best is None:
        return None
    middle, half = (best[0] + best[1]) / 2, 0.75 * (best[1] - best[0])
    if 2 * half * TALL_CROP > height:
        return None
    half = max(half, MIN_TRIMMED * height / 2)  # a dash keeps a box of text height
    return max(middle - half, 0.0), min(middle + half, float(height))


def _heaviest_run(cover: np.ndarray) -> tuple[int, int] | None:
    """(start, end) of the run of inked rows holding the most ink."""
    best, best_ink, start = None, 0.0, None
    for row, share in enumerate([*cover, 0.0]):
        if share and start is None:
            start = row
        elif not share and start is not None:
            if cover[start:row].sum() > best_ink:
                best, best_ink = (start, row), float(cover[start:row].sum())
            start = None
    return best


def wide_gaps(inked: np.ndarray, text: str, text_height: float) -> list[tuple[int, int]]:
    """(start, end) columns of the ink pauses wide enough to be column gaps, given the
    columns that hold ink. In a line of a few glyphs ("x %", "1-": a right-aligned Qty
    beside its neighbour) the gap itself makes up most of the pitch, so there the glyphs'
    height is the measure: 1.1 times it (about 0.8 em at a capital; a cell padding is 1 em)."""
    if inked.size < 2 or len(text) < 2:
        return []
    if len(text.replace(" ", "")) <= FEW_GLYPHS:
        least = FEW_GLYPHS_GAP * text_height
    else:
        least = WIDE_GAP_PITCHES * (inked[-1] - inked[0] + 1) / len(text)
    jumps = np.flatnonzero(np.diff(inked) > 1)
    gaps = [(int(inked[i]) + 1, int(inked[i + 1])) for i in jumps]
    return [(a, b) for a, b in gaps if b - a >= least]


def split_read(crop: np.ndarray, text: str, xs: np.ndarray | None) -> list[Part]:
    """The read in parts, in crop pixels: split at its wide gaps (where `xs`, the crop column
    of each character, is known), each part's sides drawn in to its ink plus the detector's
    usual margin, and top and bottom drawn in to the text where a rule runs through the crop.
    Detector boxes reach 6 or 7 px past the glyphs at 15 px text, so two cells 16 px apart
    ("12" and "pcs") overlapped and hid their column gap."""
    height, width = crop.shape[:2]
    top, bottom = text_rows(crop) or (0.0, float(height))
    inked = _without_slivers(np.flatnonzero(ink_columns(crop[round(top) : round(bottom)])), crop)
    if inked.size == 0:
        return [Part(text, 0.0, float(width), top, bottom)]
    margin = BOX_MARGIN * (bottom - top)
    gaps = wide_gaps(inked, text, ink_height(crop)) if xs is not None else []
    first, last = _outer_ink(inked, ink_columns(crop[round(top) : round(bottom)], whole=True))
    parts, start, left = [], 0, first - margin
    for gap_start, gap_end in gaps:
        assert xs is not None  # gaps are only looked for with the characters' positions
        cut = int(np.count_nonzero(xs < (gap_start + gap_end) / 2))
        if not text[start:cut].strip() or not text[cut:].strip():
            continue  # no character on one side: the recognizer read nothing there
        parts.append((text[start:cut].strip(), left, gap_start + margin))
        start, left = cut, gap_end - margin
    parts.append((text[start:].strip(), left, last + 1 + margin))
    return [Part(part, max(a, 0.0), min(b, float(width)), top, bottom) for part, a, b in parts]


def _outer_ink(inked: np.ndarray, whole: np.ndarray) -> tuple[int, int]:
    """The first and last inked columns, each grown over the ink joined to it above or below
    the middle band: a "T"'s bar reaches past its stem (a box drawn in to the stem alone put
    a searchable PDF's words 5 pt off their glyphs)."""
    first, last = int(inked[0]), int(inked[-1])
    while first > 0 and whole[first - 1]:
        first -= 1
    while last < whole.size - 1 and whole[last + 1]:
        last += 1
    return first, last


def _without_slivers(inked: np.ndarray, crop: np.ndarray) -> np.ndarray:
    """Inked columns less a sliver at either edge of the crop, apart from the rest: the edge
    of a neighbour's glyph that the detector's box took in (the "6" of a date 14 px to the left
    of "Phone contract")."""
    height, width = crop.shape[:2]
    for _ in range(2):
        if inked.size < 2:
            return inked
        jumps = np.flatnonzero(np.diff(inked) > 1)
        if inked[0] == 0 and jumps.size:
            first = jumps[0]
            if inked[first] < SLIVER * height and inked[first + 1] - inked[first] > SLIVER * height:
                inked = inked[first + 1 :]
                continue
        if inked[-1] == width - 1 and jumps.size:
            last = jumps[-1]
            gap = inked[last + 1] - inked[last]
            if width - inked[last + 1] < SLIVER * height and gap > SLIVER * height:
                inked = inked[: last + 1]
                continue
        return inked
    return inked


def part_quad(quad: np.ndarray, width: float, height: float, part: Part) -> np.ndarray:
    """The piece of a line's quadrilateral that a part covers in its crop (`width` x
    `height`)."""
    start, end = max(part.left / width, 0.0), min(part.right / width, 1.0)
    upper, lower = part.top / height, part.bottom / height
    top_left, top_right, bottom_right, bottom_left = quad.astype(np.float32)
    left_side, right_side = bottom_left - top_left, bottom_right - top_right
    top_left, bottom_left = top_left + left_side * upper, top_left + left_side * lower
    top_right, bottom_right = top_right + right_side * upper, top_right + right_side * lower
    return np.array(
        [
            top_left + (top_right - top_left) * start,
            top_left + (top_right - top_left) * end,
            bottom_left + (bottom_right - bottom_left) * end,
            bottom_left + (bottom_right - bottom_left) * start,
        ],
        dtype=np.float32,
    )


# Crops narrower than this many heights (one or two characters) are read with a margin.
NARROW_CROP = 1.5
# Letters whose small and capital forms differ only in height: read alone, the recognizer
# (which scales every line to 48 px) cannot tell "x" from "X".
SAME_SHAPE = frozenset("cosvwxzCOSVWXZ")
# Lines whose ink reaches from the baseline to the capital height: a digit, a capital or a
# tall letter, and nothing below the baseline.
TALL = frozenset("0123456789ABCDEFGHIKLMNOPRSTUVWXYZbdfhklt")
DESCENDING = frozenset("gjpqyQJ,;()[]{}|/$@")
# A lone letter whose ink is less than this share of the capital height is a small letter.
SMALL_LETTER = 0.85


def ink_height(crop: np.ndarray) -> int:
    """Rows of a crop holding ink (from the top of the highest glyph to the lowest)."""
    ink = ink_mask(crop, otsu=True, min_spread=MIN_SPREAD)
    if not ink.any():
        return 0
    ink[:, ink.mean(axis=0) >= RULE_COVER] = False  # a grid's vertical rule beside the glyph
    cover = ink.mean(axis=1)
    cover[cover >= RULE_COVER] = 0
    run = _heaviest_run(cover)
    return 0 if run is None else run[1] - run[0]


def capital_height(texts: list[str], crops: list[np.ndarray]) -> float | None:
    """The median ink height of the lines reaching from the baseline to the capitals; None
    when no line shows it (or no lone same-shape letter needs it)."""
    if not any(set(text) & SAME_SHAPE for text in texts):
        return None
    tall = [
        ink_height(crop)
        for text, crop in zip(texts, crops, strict=True)
        if len(text) >= 2 and set(text) & TALL and not set(text) & DESCENDING
    ]
    tall = [height for height in tall if height]
    return float(np.median(tall)) if tall else None


def letter_case(part: Part, crop: np.ndarray, capital: float | None) -> str:
    """A part that is a lone same-shape letter ("x" in a spec sheet's cell) made small or
    capital by its ink's height against the page's capital height."""
    letter = part.text
    if capital is None or len(letter) != 1 or letter not in SAME_SHAPE:
        return letter
    piece = crop[:, max(round(part.left), 0) : round(part.right)]
    small = ink_height(piece) < SMALL_LETTER * capital
    return letter.lower() if small else letter.upper()


def with_margin(crop: np.ndarray) -> np.ndarray:
    """A crop of one or two characters widened by half its height on both sides, its edge
    columns repeated (a rule through it runs on, a fill stays a fill): boxed tightly, a lone
    dash read at 0.34 and went under the confidence floor (0.6 to 0.9 with the margin), and a
    dot-like "-" read as "·"."""
    height, width = crop.shape[:2]
    if width >= NARROW_CROP * height or height < 2:
        return crop
    pad = height // 2
    return cv2.copyMakeBorder(crop, 0, 0, pad, pad, cv2.BORDER_REPLICATE)


_LETTER_TIMES = re.compile(r"\d\s*x\s*\d")
_SIGN_TIMES = re.compile(r"(?<=\d)(\s*)×(?=\s*\d)")


def consistent_times(text: str) -> str:
    """A dimension written with the letter x ("232 x 275 x 31 mm") where the recognizer read
    some of its x's as the sign × ("232 × 275 x 31 mm"): the sign between digits becomes the
    letter when the same line has the letter between digits too. A line with the sign alone
    is left as read: the recognizer's alphabet has ×, and a page may well draw it."""
    if "×" not in text or not _LETTER_TIMES.search(text):
        return text
    return _SIGN_TIMES.sub(lambda match: match.group(1) + "x", text)


def line_fragments(
    quad: np.ndarray,
    crop: np.ndarray,
    read: tuple[str, float, np.ndarray | None],
    capital: float | None = None,
) -> list[TextFragment]:
    """The read as one fragment, or as several where it runs across a column gap; a line's
    box drawn in to its ink; a lone same-shape letter in its case (`letter_case`)."""
    text, score, columns = read
    text = consistent_times(text)  # one for one: the columns still match
    height, width = crop.shape[:2]
    if height > width:  # a lone narrow glyph: left as boxed (decorations.py judges its box)
        whole = Part(text, 0.0, float(width), 0.0, float(height))
        return [
            TextFragment(letter_case(whole, crop, capital), tuple(map(tuple, quad.tolist())), score)
        ]
    return [
        TextFragment(
            letter_case(part, crop, capital),
            tuple(map(tuple, part_quad(quad, width, height, part).tolist())),
            score,
        )
        for part in split_read(crop, text, columns)
    ]
