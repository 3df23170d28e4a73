"""Find tables drawn with grid lines: long thin horizontal and vertical rules that cross."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from desktop.core.ocr.models import Box

# A rule must cover this share of its table's width (or height) to count as a row (column)
# boundary; partial rules (a merged header cell) still split where most rows are split.
RULE_COVERAGE = 0.6
# Grey-level difference across a vertical run above which it is the edge of a filled area.
FILL_EDGE_CONTRAST = 40
# Pixels inside and outside a one-cell box compared to tell an outline from a filled band.
FRAME_SAMPLE = 4
# px: a drawn line is this thin at most (a scroll bar's thumb, 6-7 px, is not one).
MAX_RULE_WIDTH = 3


@dataclass(frozen=True)
class TableGrid:
    xs: tuple[int, ...]  # x of each vertical rule, left to right
    ys: tuple[int, ...]  # y of each horizontal rule, top to bottom

    @property
    def is_frame(self) -> bool:
        """One cell: a box drawn around a block of text, not a table."""
        return len(self.xs) == 2 and len(self.ys) == 2

    @property
    def box(self) -> Box:
        return self.xs[0], self.ys[0], self.xs[-1], self.ys[-1]

    def cell_of(self, x: float, y: float) -> tuple[int, int] | None:
        """(row, column) of the cell holding the point, or None outside the grid."""
        row = int(np.searchsorted(self.ys, y)) - 1
        column = int(np.searchsorted(self.xs, x)) - 1
        if 0 <= row < len(self.ys) - 1 and 0 <= column < len(self.xs) - 1:
            return row, column
        return None


def find_table_grids(gray: np.ndarray) -> list[TableGrid]:
    """Grids of at least 2 x 2 cells in a greyscale uint8 image (dark or light theme), and
    frames (one cell: a box drawn around a block, read as a block of its own)."""
    ink = _ink_mask(gray)
    height, width = gray.shape
    # Kernels longer than any glyph stroke: only rules survive the opening.
    horizontal = _keep_runs(ink, (max(40, width // 25), 1))
    vertical = _keep_runs(ink, (1, max(25, height // 40)))
    joints = cv2.bitwise_and(
        cv2.dilate(horizontal, np.ones((5, 5), np.uint8)),
        cv2.dilate(vertical, np.ones((5, 5), np.uint8)),
    )
    count, _, stats, _ = cv2.connectedComponentsWithStats(horizontal | vertical, connectivity=8)
    grids = []
    for left, top, box_width, box_height, _ in stats[1:count]:
        if box_width < 60 or box_height < 30:
            continue
        window = (slice(top, top + box_height), slice(left, left + box_width))
        if np.count_nonzero(joints[window]) == 0:
            continue  # lines that never cross: an underline or a frame edge, not a grid
        ys = _rule_positions(horizontal[window].sum(axis=1) / 255, box_width, top)
        xs = _rule_positions(vertical[window].sum(axis=0) / 255, box_height, left)
        xs = [x for x in xs if not _is_fill_edge(gray, vertical, x)]
        if (len(xs) >= 3 and len(ys) >= 3) or (
            len(xs) == 2 and len(ys) == 2 and _is_outline(gray, xs, ys)
        ):
            grids.append(TableGrid(xs=tuple(xs), ys=tuple(ys)))
    return grids


def vertical_rules(gray: np.ndarray, min_length: int) -> list[tuple[int, int, int]]:
    """(x, top, bottom) of each drawn vertical line at least `min_length` px long and at most
    MAX_RULE_WIDTH wide: a rule, not the side of a filled shape (`_is_fill_edge`)."""
    vertical = _keep_runs(_ink_mask(gray), (1, max(25, min_length)))
    count, _, stats, _ = cv2.connectedComponentsWithStats(vertical, connectivity=8)
    rules = []
    for left, top, width, height, _ in stats[1:count]:
        x = int(left + width // 2)
        if width <= MAX_RULE_WIDTH and not _is_fill_edge(gray, vertical, x):
            rules.append((x, int(top), int(top + height)))
    return rules


def _is_outline(gray: np.ndarray, xs: list[int], ys: list[int]) -> bool:
    """A box drawn as an outline, the same paper inside and out; not the edges of a filled
    band (a table's shaded header row)."""
    (left, right), (top, bottom) = xs, ys
    if right - left < 2 * FRAME_SAMPLE or bottom - top < 2 * FRAME_SAMPLE:
        return False
    inside = gray[
        top + FRAME_SAMPLE : bottom - FRAME_SAMPLE, left + FRAME_SAMPLE : right - FRAME_SAMPLE
    ]
    outer = gray[
        max(top - FRAME_SAMPLE, 0) : bottom + FRAME_SAMPLE + 1,
        max(left - FRAME_SAMPLE, 0) : right + FRAME_SAMPLE + 1,
    ]
    ring = np.concatenate(
        [outer[:2].ravel(), outer[-2:].ravel(), outer[:, :2].ravel(), outer[:, -2:].ravel()]
    )
    return abs(float(np.median(inside)) - float(np.median(ring))) <= FILL_EDGE_CONTRAST / 4


def _is_fill_edge(gray: np.ndarray, vertical: np.ndarray, x: int) -> bool:
    """A vertical run that is the side of a filled shape (a bar of a chart), not a drawn rule:
    its two sides differ along most of its length. A rule has the same paper, or the same
    row fill, on both sides."""
    rows = np.flatnonzero(vertical[:, x])
    if rows.size == 0:
        return False
    left, right = max(x - 5, 0), min(x + 5, gray.shape[1] - 1)
    sides = gray[rows, left].astype(np.int16) - gray[rows, right].astype(np.int16)
    return bool(np.median(np.abs(sides)) > FILL_EDGE_CONTRAST)


def _ink_mask(gray: np.ndarray) -> np.ndarray:
    """Pixels that stand out from their neighbourhood, whichever way round the theme is."""
    if np.median(gray) < 128:  # dark theme: light rules on a dark background
        gray = 255 - gray
    return cv2.adaptiveThreshold(
        gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 15, 12
    )


def _keep_runs(ink: np.ndarray, kernel_size: tuple[int, int]) -> np.ndarray:
    """The 0/255 mask opened by a line kernel (width, height): the runs of ink along it at
    least that long. A line kernel never mixes two columns (two rows), and one with fewer ink
    pixels than the shortest window the opening takes (half the kernel, at the page's edge)
    keeps nothing; where those are few, the opening runs on the other lines alone, and the mask
    is the same. A pane rule's kernel is half the page long: on a 1000 x 20000 strip the
    opening took 2.6 s on every column, 0.9 s on those."""
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, kernel_size)
    down = kernel_size[0] == 1  # a vertical kernel: the runs go down the columns
    along, length = (0, kernel_size[1]) if down else (1, kernel_size[0])
    counts = cv2.reduce(ink, along, cv2.REDUCE_SUM, dtype=cv2.CV_32S).ravel() // 255
    lines = np.flatnonzero(counts >= min((length + 1) // 2, ink.shape[along]))
    if lines.size > counts.size // 2:  # gathering most of the page costs more than it saves
        return cv2.morphologyEx(ink, cv2.MORPH_OPEN, kernel)
    kept = np.zeros_like(ink)
    if lines.size and down:
        kept[:, lines] = cv2.morphologyEx(
            np.ascontiguousarray(ink[:, lines]), cv2.MORPH_OPEN, kernel
        )
    elif lines.size:
        kept[lines] = cv2.morphologyEx(ink[lines], cv2.MORPH_OPEN, kernel)
    return kept


def _rule_positions(profile: np.ndarray, span: int, offset: int) -> list[int]:
    """Centres of the runs of profile values covering RULE_COVERAGE of the span."""
    positions: list[int] = []
    run_start = None
    for index, covered in enumerate([*(profile >= RULE_COVERAGE * span), False]):
        if covered and run_start is None:
            run_start = index
        elif not covered and run_start is not None:
            # int(): OpenCV's stats are numpy int32, which JSON output cannot hold
            positions.append(int(offset) + (run_start + index - 1) // 2)
            run_start = None
    return positions
