"""Reading order by recursive XY-cut: columns, sidebars, headings and toolbars (chat threads
and charts are recognised first, in screen_regions).

Where a vertical gutter runs through a region and both sides read as separate columns, the
left column is read before the right one; otherwise the region is cut horizontally and read
top to bottom. A column split needs prose on one side, or two blocks whose rows do not line up:
rows that line up across a gap are a table or a form, read row by row.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from desktop.core.ocr.layout_items import Item, Row, group_rows, items_of, vertical_gaps
from desktop.core.ocr.screen_regions import (
    ChartParts,
    are_plot_labels,
    chart_parts,
    conversation_bands,
)

# Heading or footer rows that may run across the columns below or above them.
MAX_SPANNING_ROWS = 3
# A row this wide (share of the region) reads across any columns above or below it.
SPANNING_SHARE = 0.8
# A table column may lack a few cells; a menu beside other labels lacks most (its items can
# still sit level with the other side's rows, first and last included).
MIN_FILLED_SHARE = 0.6


@dataclass
class Region:
    items: list[Item]
    column: int = 0
    from_column_split: bool = False  # never merged with the regions above or below it
    plot_labels: bool = False  # a chart's data labels: read left to right, one per line


def segment(items: list[Item], text_height: float, column: int = 0) -> list[Region]:
    """Chat threads and charts first (screen_regions), then a recursive XY-cut."""
    bands = conversation_bands(items, text_height)
    if bands is not None:
        return [region for band in bands for region in _xy_cut(band, text_height, column)]
    chart = chart_parts(items, text_height)
    if chart is not None:
        return _chart_regions(chart, text_height, column)
    return _xy_cut(items, text_height, column)


def _chart_regions(chart: ChartParts, text_height: float, column: int) -> list[Region]:
    """Title and legend, the axis ticks, the plot's labels, then the x axis."""
    regions = segment(chart.above, text_height, column) if chart.above else []
    regions.append(Region(chart.ticks, column, from_column_split=True))
    if are_plot_labels(chart.plot):
        regions.append(Region(chart.plot, column, from_column_split=True, plot_labels=True))
    elif chart.plot:
        regions += segment(chart.plot, text_height, column)
    if chart.below:
        regions += segment(chart.below, text_height, column)
    return regions


def _xy_cut(items: list[Item], text_height: float, column: int) -> list[Region]:
    """Recursive XY-cut, trying in turn: a lone row at the top or bottom (a title, a toolbar,
    a status bar), a gutter beside prose (columns of text, a sidebar beside content), a cut
    below a heading that spans such columns, a blank line across the whole region, a gutter
    between unaligned blocks (two address blocks), and any horizontal gap."""
    cut = _edge_row_cut(items, text_height)
    columns = None if cut is not None else _column_split(items, text_height, beside_prose=True)
    if not columns and cut is None:
        cut = _spanning_edge_cut(items, text_height)
    if not columns and cut is None:
        cut = _widest_horizontal_gap(items, 0.5 * text_height)
        if cut is None:
            columns = _column_split(items, text_height, beside_prose=False)
    if columns:
        return [
            Region(region.items, index, from_column_split=True)
            for index, part in enumerate(columns)
            for region in segment(part, text_height, index)
        ]
    cut = cut if cut is not None else _widest_horizontal_gap(items, 0.0)
    if cut is None:
        return [Region(items, column)]
    above = [item for item in items if item.centre_y < cut]
    below = [item for item in items if item.centre_y >= cut]
    return _merge_plain(segment(above, text_height, column) + segment(below, text_height, column))


def _is_strip(row: Row) -> bool:
    """Three or more short separate items side by side: toolbar buttons, tabs, a menu bar."""
    return len(row.items) >= 3 and statistics.median(len(i.text) for i in row.items) <= 20


def _edge_row_cut(items: list[Item], text_height: float) -> float | None:
    """A cut that sets the top or bottom row apart when it stands alone: a single item after
    (or before) a blank band, such as a title, a title bar, a status bar or a page number, or
    a strip of items such as a toolbar, or a footer across the page (a slide's title and
    number) set apart by a blank band."""
    rows = group_rows(items)
    if len(rows) < 2:
        return None
    width = max(row.right for row in rows) - min(row.left for row in rows)
    for edge, neighbour in ((rows[0], rows[1]), (rows[-1], rows[-2])):
        upper, lower = sorted((edge, neighbour), key=lambda row: row.top)
        gap = lower.top - upper.bottom
        if (
            (_is_strip(edge) and gap >= 0.3 * text_height)
            or (len(edge.items) == 1 and gap >= 0.5 * text_height)
            or (edge.right - edge.left >= SPANNING_SHARE * width and gap >= 1.5 * text_height)
        ):
            return (upper.bottom + lower.top) / 2
    return None


def _spanning_edge_cut(items: list[Item], text_height: float) -> float | None:
    """A cut below a heading (or above a footer) that spans columns which the rest of the
    region splits into; cutting at the widest gap instead could slice every column."""
    rows = group_rows(items)
    for count in range(1, min(MAX_SPANNING_ROWS, len(rows) - 1) + 1):
        for upper, lower, rest in (
            (rows[count - 1], rows[count], rows[count:]),
            (rows[-count - 1], rows[-count], rows[:-count]),
        ):
            if lower.top - upper.bottom < 0.3 * text_height:
                continue
            if _column_split(items_of(rest), text_height, beside_prose=True):
                return (upper.bottom + lower.top) / 2
    return None


def _merge_plain(regions: list[Region]) -> list[Region]:
    """Rejoin neighbouring full-width pieces, so that paragraphs and tables see whole runs."""
    merged: list[Region] = []
    for region in regions:
        if merged and not region.from_column_split and not merged[-1].from_column_split:
            merged[-1].items.extend(region.items)
        else:
            merged.append(region)
    return merged


def _widest_horizontal_gap(items: list[Item], min_gap: float) -> float | None:
    """The middle of the tallest empty horizontal band between items, if one exceeds min_gap."""
    spans = sorted((item.top, item.bottom) for item in items)
    best, best_size = None, min_gap
    reach = spans[0][1]
    for top, bottom in spans[1:]:
        if top - reach > best_size:
            best, best_size = (top + reach) / 2, top - reach
        reach = max(reach, bottom)
    return best


def _column_split(
    items: list[Item], text_height: float, *, beside_prose: bool
) -> list[list[Item]] | None:
    """Split at vertical gutters when the pieces read as separate columns, else None."""
    if len(items) < 4:
        return None
    gaps = vertical_gaps(items, text_height)
    if not gaps:
        return None
    strips = [row for row in group_rows(items) if _is_strip(row)]
    for chosen in [gaps, *([gap] for gap in sorted(gaps, key=lambda g: g[0] - g[1]))]:
        if any(_crosses(row, gap) for row in strips for gap in chosen):
            continue  # a toolbar or a table header runs across this gap: not a gutter
        parts = _split_at(items, chosen)
        if all(
            _are_separate_columns(parts[i], parts[i + 1], text_height, beside_prose)
            for i in range(len(parts) - 1)
        ):
            return parts
    return None


def _crosses(row: Row, gap: tuple[float, float]) -> bool:
    return row.items[0].left < gap[0] and row.items[-1].right > gap[1]


def _split_at(items: list[Item], gaps: list[tuple[float, float]]) -> list[list[Item]]:
    bounds = [right for _, right in sorted(gaps)]
    parts: list[list[Item]] = [[] for _ in range(len(bounds) + 1)]
    for item in items:
        parts[sum(1 for bound in bounds if item.left >= bound)].append(item)
    return parts


def _are_separate_columns(
    left: list[Item], right: list[Item], text_height: float, beside_prose: bool
) -> bool:
    """Two prose columns, or two blocks whose rows do not line up (a sidebar beside content);
    with `beside_prose`, one of the unaligned blocks must be made of sentences.

    Rows that line up across the gutter are a table or a form: read row by row instead.
    """
    left_rows, right_rows = group_rows(left), group_rows(right)
    if len(left_rows) < 2 or len(right_rows) < 2:
        return _lone_row_beside_text(left_rows, right_rows, text_height)
    if _is_prose(left_rows) and _is_prose(right_rows):
        return True
    if beside_prose and not (_is_wordy(left_rows) or _is_wordy(right_rows)):
        return False
    # Table columns have a cell on (nearly) every row of the other side; counting from the
    # side with more rows also separates blocks of different lengths (two address blocks).
    fewer, more = sorted((left_rows, right_rows), key=len)

    def level(row: Row, others: list[Row]) -> bool:
        return any(abs(row.centre_y - other.centre_y) < 0.3 * text_height for other in others)

    matched = sum(1 for row in fewer if level(row, more))
    holes_inside = level(more[0], fewer) and level(more[-1], fewer)
    cells = not (_is_wordy(left_rows) or _is_wordy(right_rows))
    if cells and matched == len(fewer) and holes_inside:
        # the shorter side has a few holes inside: a table with empty cells
        return len(fewer) < MIN_FILLED_SHARE * len(more)
    return matched < 0.8 * len(more)


def _lone_row_beside_text(left: list[Row], right: list[Row], text_height: float) -> bool:
    """One row (a figure's caption) beside three or more rows of sentences, level with none
    of them: a block of its own, read after the text. Level with one, it belongs to that row
    (a date beside a heading, a price beside a name)."""
    lone, text = (left, right) if len(left) < len(right) else (right, left)
    if len(lone) != 1 or len(text) < 3 or not _is_wordy(text):
        return False
    return all(abs(lone[0].centre_y - row.centre_y) >= 0.3 * text_height for row in text)


def _is_wordy(rows: list[Row]) -> bool:
    """Sentences rather than labels: four or more words per row on average."""
    return statistics.mean(len(row.text.split()) for row in rows) >= 4


def _is_prose(rows: list[Row]) -> bool:
    """Wrapped paragraphs: lines of several words, in one piece, mostly filling the width."""
    text_rows = [row for row in rows if row.table is None]
    if len(text_rows) < 3:
        return False
    width = max(row.right for row in text_rows) - min(row.left for row in text_rows)
    full = sum(1 for row in text_rows if row.right - row.left >= 0.75 * width)
    whole = sum(1 for row in text_rows if len(row.items) == 1)
    words = statistics.mean(len(row.text.split()) for row in text_rows)
    return words >= 4 and full * 2 >= len(text_rows) and whole >= 0.7 * len(text_rows)
