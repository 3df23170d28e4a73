"""Geometry shared by the layout steps: fragments as deskewed boxes, grouped into rows."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from desktop.core.ocr.models import Box, OcrTable, TextFragment

# Below this skew (degrees) rotating the coordinates changes nothing worth the rounding.
MIN_SKEW_DEGREES = 0.3


@dataclass(frozen=True)
class RuledTable:
    table: OcrTable
    rows: tuple[tuple[Box, float], ...]  # box and mean confidence of each row


@dataclass
class Item:
    """A fragment (or a whole ruled table) with its deskewed bounding box."""

    left: float
    top: float
    right: float
    bottom: float
    fragment: TextFragment | None = None
    ruled: RuledTable | None = None  # set for a ruled table, which stands in for its cells

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def width(self) -> float:
        return self.right - self.left

    @property
    def centre_y(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def text(self) -> str:
        return self.fragment.text if self.fragment else ""


@dataclass
class Row:
    items: list[Item]

    @property
    def top(self) -> float:
        return min(item.top for item in self.items)

    @property
    def bottom(self) -> float:
        return max(item.bottom for item in self.items)

    @property
    def left(self) -> float:
        return self.items[0].left

    @property
    def right(self) -> float:
        return max(item.right for item in self.items)

    @property
    def height(self) -> float:
        return statistics.median(item.height for item in self.items)

    @property
    def centre_y(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def text(self) -> str:
        return " ".join(item.text for item in self.items)

    @property
    def table(self) -> RuledTable | None:
        return self.items[0].ruled


def skew_angle(fragments: Sequence[TextFragment]) -> float:
    """Median slope (radians) of the top edges of long fragments; 0 when negligible."""
    angles = []
    for fragment in fragments:
        (x0, y0), (x1, y1) = fragment.quad[0], fragment.quad[1]
        left, top, right, bottom = fragment.box
        if right - left > 2 * (bottom - top) and x1 > x0:
            angles.append(math.atan2(y1 - y0, x1 - x0))
    if not angles:
        return 0.0
    angle = statistics.median(angles)
    return angle if abs(math.degrees(angle)) >= MIN_SKEW_DEGREES else 0.0


def rotate(points: Iterable[tuple[float, float]], angle: float) -> list[tuple[float, float]]:
    cos, sin = math.cos(angle), math.sin(angle)
    return [(x * cos + y * sin, -x * sin + y * cos) for x, y in points]


def deskewed(fragment: TextFragment, angle: float) -> Item:
    points = rotate(fragment.quad, angle) if angle else fragment.quad
    xs, ys = [x for x, _ in points], [y for _, y in points]
    return Item(min(xs), min(ys), max(xs), max(ys), fragment=fragment)


def box_corners(box: Box) -> list[tuple[float, float]]:
    left, top, right, bottom = box
    return [(left, top), (right, top), (right, bottom), (left, bottom)]


def overlap(a_top: float, a_bottom: float, b_top: float, b_bottom: float) -> float:
    return min(a_bottom, b_bottom) - max(a_top, b_top)


def union_box(boxes: Iterable[Box]) -> Box:
    lefts, tops, rights, bottoms = zip(*boxes, strict=True)
    return min(lefts), min(tops), max(rights), max(bottoms)


def group_rows(items: Iterable[Item]) -> list[Row]:
    """Group items whose vertical extents overlap by at least half into rows, left to right;
    never one under another."""
    rows: list[Row] = []
    for item in sorted(items, key=lambda i: i.centre_y):
        last = rows[-1] if rows else None
        joins = (
            last is not None
            and last.table is None
            and item.ruled is None
            and overlap(item.top, item.bottom, last.top, last.bottom)
            >= 0.5 * min(item.height, last.height)
            and not _stacked(item, last)
        )
        if joins and last is not None:
            last.items.append(item)
        else:
            rows.append(Row([item]))
    for row in rows:
        row.items.sort(key=lambda i: i.left)
    return rows


def _stacked(item: Item, row: Row) -> bool:
    """`item` lies under an item of `row` (the two share columns, their middles a half line or
    more apart): the next line of a block. A row's extent grows with each item it takes, so a
    block set beside lines at another pitch reached the line under it (an invoice's "Date" and
    "Due" beside its address lines: one row, "Due Date | 2024-09-17 2024-10-17")."""
    return any(
        min(item.right, other.right) > max(item.left, other.left)
        and abs(item.centre_y - other.centre_y) > 0.5 * min(item.height, other.height)
        for other in row.items
    )


def items_of(rows: Iterable[Row]) -> list[Item]:
    return [item for row in rows for item in row.items]


def vertical_gaps(items: Iterable[Item], min_gap: float) -> list[tuple[float, float]]:
    """Empty vertical bands (x ranges) at least min_gap wide between the items."""
    spans = sorted((item.left, item.right) for item in items)
    gaps = []
    reach = spans[0][1]
    for left, right in spans[1:]:
        if left - reach >= min_gap:
            gaps.append((reach, left))
        reach = max(reach, right)
    return gaps
