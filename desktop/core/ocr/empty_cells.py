"""Ink in a table's empty cells, read on its own (issue 28).

The detector does not always see a lone small glyph: a spec sheet's "-" (5 x 2 px at 15 px
text) scored 0.1 on its probability map, and the cell came out empty. Once the layout knows a
table's rows and columns, an empty cell that holds ink is cut out and read by the recognizer
alone; what it reads becomes a fragment of that cell, and the page is laid out again. Pages
without tables, and tables without inked empty cells, cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np

from desktop.core.ocr.ink import ink_mask
from desktop.core.ocr.models import Box, OcrResult, OcrTable, TextFragment

# Grey-level difference from the cell's own background that counts as ink, and how many such
# pixels it takes (anti-aliasing and JPEG noise stay below both).
INK_CONTRAST = 60
MIN_INK_PIXELS = 4
# Pixels kept clear of a ruled cell's rules.
RULE_INSET = 3
# A lone glyph read alone is less sure than within a line: a dash read at 0.34 to 0.9.
MIN_CONFIDENCE = 0.3
MAX_CHARACTERS = 3

Recognize = Callable[[Sequence[np.ndarray]], list[tuple[str, float]]]


def empty_cell_regions(table: OcrTable) -> list[Box]:
    """The box of each empty cell: a ruled cell's rectangle inside its rules; an aligned
    cell's column (the extent of its filled cells) across its row's text."""
    if not table.cell_boxes:
        return []
    spans = _column_spans(table)
    regions = []
    for texts, boxes in zip(table.rows, table.cell_boxes, strict=True):
        filled = [box for box in boxes if box is not None]
        if not filled:
            continue
        top, bottom = min(b[1] for b in filled), max(b[3] for b in filled)
        for text, box, span in zip(texts, boxes, spans, strict=True):
            if text:
                continue
            if table.ruled and box is not None:
                left, cell_top, right, cell_bottom = box
                inset = RULE_INSET
                regions.append((left + inset, cell_top + inset, right - inset, cell_bottom - inset))
            elif not table.ruled and span is not None:
                regions.append((span[0], top, span[1], bottom))
    return regions


def _column_spans(table: OcrTable) -> list[tuple[int, int] | None]:
    """Each column's extent: from the leftmost to the rightmost of its filled cells."""
    spans: list[tuple[int, int] | None] = []
    for column in range(len(table.rows[0])):
        boxes = [box for row in table.cell_boxes if (box := row[column]) is not None]
        spans.append((min(b[0] for b in boxes), max(b[2] for b in boxes)) if boxes else None)
    return spans


def ink_box(gray: np.ndarray, region: Box) -> Box | None:
    """The bounding box of the ink in a region of a greyscale page, or None."""
    left, top, right, bottom = (max(0, round(value)) for value in region)
    ink = ink_mask(gray[top:bottom, left:right], contrast=INK_CONTRAST)
    if np.count_nonzero(ink) < MIN_INK_PIXELS:
        return None
    ys, xs = np.nonzero(ink)
    return (
        left + int(xs.min()),
        top + int(ys.min()),
        left + int(xs.max()) + 1,
        top + int(ys.max()) + 1,
    )


def read_empty_cells(
    result: OcrResult, gray: np.ndarray, recognize: Recognize
) -> list[TextFragment]:
    """Fragments for the glyphs found in the empty cells of the result's tables."""
    crops, boxes = [], []
    for table in result.tables:
        for region in empty_cell_regions(table):
            ink = ink_box(gray, region)
            if ink is None:
                continue
            # The cell's height around the ink, and as much again across: a crop like the
            # detector's box around one glyph.
            height = region[3] - region[1]
            left = max(region[0], ink[0] - height // 2)
            right = min(region[2], ink[2] + height // 2)
            crop = gray[region[1] : region[3], left:right]
            if crop.size:
                crops.append(cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_GRAY2BGR))
                boxes.append((ink[0], region[1], ink[2], region[3]))
    found = []
    for (text, score), box in zip(recognize(crops) if crops else [], boxes, strict=True):
        text = text.strip()
        if text and len(text) <= MAX_CHARACTERS and score >= MIN_CONFIDENCE:
            found.append(TextFragment.from_box(text, box, score))
    return found
