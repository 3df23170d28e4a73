"""Two screen layouts that a recursive XY-cut misreads, found before it runs.

A chat thread: blocks that alternate between the left and the right edge, each narrower than
the thread and with empty bands between them. A gutter runs down between the sides, so the
XY-cut would read every left bubble before the first right one; it is read top to bottom.
Two text columns never look like this: their blocks overlap in height, and a band across the
page holds both.

A chart: a column of evenly stepped numbers (the y axis, highest first) with nothing to its
left. Its text is read as title and legend (above the axis), ticks top to bottom, the labels
in the plot left to right, then what is below (the x axis).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby, pairwise

from desktop.core.ocr.layout_items import Item

# Share of the region's width within which a block touches its left or right edge.
EDGE_SHARE = 0.12
# A block wider than this share of the region spans both sides: not a chat bubble.
MAX_BUBBLE_SHARE = 0.75
NUMBER = re.compile(r"^[-+]?[$€£]?\d{1,3}(?:[,.\s]?\d{3})*(?:[.,]\d+)?\s?[%kKmM]?$")


def _bands(items: list[Item], min_gap: float) -> list[list[Item]]:
    """Items grouped into horizontal bands separated by empty rows at least min_gap high."""
    bands: list[list[Item]] = []
    reach = None
    for item in sorted(items, key=lambda i: i.top):
        if reach is None or item.top - reach >= min_gap:
            bands.append([])
        bands[-1].append(item)
        reach = item.bottom if reach is None else max(reach, item.bottom)
    return bands


def _side(band: list[Item], left: float, right: float) -> str | None:
    """ "L" or "R" for a block against one edge, "" for a centred one (a day separator), None
    for a block spanning both sides."""
    width = right - left
    band_left, band_right = min(i.left for i in band), max(i.right for i in band)
    if band_right - band_left > MAX_BUBBLE_SHARE * width:
        return None
    if band_left - left <= EDGE_SHARE * width:
        return "L"
    return "R" if right - band_right <= EDGE_SHARE * width else ""


def conversation_bands(items: list[Item], text_height: float) -> list[list[Item]] | None:
    """The blocks of a chat thread, top to bottom; None when the region is not one."""
    bands = _bands(items, 0.4 * text_height)
    if len(bands) < 3:
        return None
    left, right = min(i.left for i in items), max(i.right for i in items)
    sides = [_side(band, left, right) for band in bands]
    if None in sides:
        return None
    turns = [side for side, _ in groupby(side for side in sides if side)]
    if len(turns) < 3:  # left, right, left at least: a reply between two messages
        return None
    return bands


@dataclass
class ChartParts:
    above: list[Item]  # title and legend
    ticks: list[Item]  # the y axis, top to bottom
    plot: list[Item]  # data labels (and anything else beside the axis)
    below: list[Item]  # the x axis labels, axis titles


def _value(text: str) -> float | None:
    if not NUMBER.match(text.strip()):
        return None
    digits = re.sub(r"[^\d.]", "", text.replace(",", ""))
    try:
        return float(digits)
    except ValueError:
        return None


def _is_axis(ticks: list[Item]) -> bool:
    """Three or more numbers stacked without overlap, decreasing by one step downwards."""
    if len(ticks) < 3:
        return False
    ticks.sort(key=lambda i: i.top)
    if any(upper.bottom > lower.top for upper, lower in pairwise(ticks)):
        return False
    values = [_value(item.text) or 0.0 for item in ticks]
    steps = [upper - lower for upper, lower in pairwise(values)]
    pitches = [lower.top - upper.top for upper, lower in pairwise(ticks)]
    return (
        min(steps) > 0
        and max(steps) - min(steps) <= 1e-6 * max(steps)
        and max(pitches) <= 1.3 * min(pitches)
    )


def _rows_shared(ticks: list[Item], beside: list[Item], text_height: float) -> int:
    """How many ticks have other text level with them (a data label now and then does)."""
    return sum(
        1
        for tick in ticks
        if any(abs(item.centre_y - tick.centre_y) < 0.3 * text_height for item in beside)
    )


def chart_parts(items: list[Item], text_height: float) -> ChartParts | None:
    """The y axis and the text around it; None when no column of numbers reads as an axis."""
    numbers = sorted((i for i in items if _value(i.text) is not None), key=lambda i: i.right)
    for anchor in numbers:
        ticks = [i for i in numbers if abs(i.right - anchor.right) <= 0.5 * text_height]
        if not _is_axis(ticks):
            continue
        top, bottom = ticks[0].top, ticks[-1].bottom
        rest = [i for i in items if not any(i is tick for tick in ticks)]
        beside = [i for i in rest if top <= i.centre_y <= bottom]
        if any(i.left < anchor.right + 0.5 * text_height for i in beside):
            continue  # text left of or inside the column: a table, not an axis
        if _rows_shared(ticks, beside, text_height) * 2 > len(ticks):
            continue  # most numbers have cells beside them in their row: a table's column
        return ChartParts(
            above=[i for i in rest if i.centre_y < top],
            ticks=ticks,
            plot=beside,
            below=[i for i in rest if i.centre_y > bottom],
        )
    return None


def are_plot_labels(items: list[Item]) -> bool:
    """Short labels, mostly numbers, scattered over several heights (values over bars or
    points): read left to right, not row by row."""
    if len(items) < 2:
        return False
    short = all(len(i.text) <= 12 for i in items)
    numeric = sum(1 for i in items if _value(i.text) is not None)
    return short and numeric >= 0.7 * len(items)
