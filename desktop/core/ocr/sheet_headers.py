"""A spreadsheet's headers: the row numbers down the left of its grid and the column names
across its top.

A sheet draws its rules between the cells and between the headers and the cells, but none at
the screen's edge or above the column names, so its headers lie outside the grid that
`ruled_tables` finds. Read apart, the row numbers came out as a column of their own before
the table ("1" "2" ... "140", then the rows without them). A line of entries beside the grid,
one in each of its rows (or columns) and close to it, is the grid's header column (row): the
grid grows by it, and each entry becomes the first cell of its row (column).

A column name alone in its box is easily misread as its look-alike ("I" as "1", "O" as "0",
"V" as "v"); in a line of names in sequence (A, B, ..., Z, AA, ...), the entries between two
names can only be the names between them.
"""

from __future__ import annotations

import re
import statistics
import string
from dataclasses import dataclass, replace
from itertools import pairwise

from desktop.core.ocr.layout_items import Item, group_rows
from desktop.core.ocr.ruled_tables import TableGrid

# Header entries lie within this many of their heights of the grid, and take this share of
# the grid's rows (columns) that hold anything.
HEADER_REACH = 2.0
HEADER_SHARE = 0.8
# Column names read in sequence that make a line a sheet's column header, and the share of
# neighbouring names that must be as far apart in the sequence as on the line.
MIN_NAMES = 5
NAMES_AGREE = 0.8
COLUMN_NAME = re.compile(r"[A-Z]{1,3}")


@dataclass(frozen=True)
class Headed:
    """A grid grown by its header column and row, and how many of each it gained (0 or 1)."""

    grid: TableGrid
    columns: int
    rows: int


def with_headers(grid: TableGrid, items: list[Item], rows: set[int], columns: set[int]) -> Headed:
    """The grid grown by the row headers left of it and the column headers above it, from
    `items` (those outside it, in the grid's coordinates); `rows`, `columns`: those of its
    rows and columns that hold text. Each is looked for beside the grid's own cells, not its
    corner."""
    left = _row_headers(grid, items, rows)
    top = _column_headers(grid, items, columns)
    xs = grid.xs if left is None else (left, *grid.xs)
    ys = grid.ys if top is None else (top, *grid.ys)
    return Headed(TableGrid(xs, ys), int(left is not None), int(top is not None))


def _row_headers(grid: TableGrid, items: list[Item], filled: set[int]) -> int | None:
    """The left edge of a column of row headers just left of the grid, or None. Its entries
    line up in one column no wider than the grid's columns (text beside a table does not)."""
    first = grid.xs[0]
    near = [
        item
        for item in items
        if item.left + item.right < 2 * first <= 2 * (item.right + HEADER_REACH * item.height)
        and grid.ys[0] < item.centre_y < grid.ys[-1]
    ]
    entries = _one_each(grid.ys, [(item, item.centre_y, item.top, item.bottom) for item in near])
    if entries is None or len(entries) < max(2, HEADER_SHARE * len(filled | set(entries))):
        return None
    lefts, rights = [i.left for i in entries.values()], [i.right for i in entries.values()]
    if max(lefts) >= min(rights) or max(rights) - min(lefts) > _median_step(grid.xs):
        return None
    return max(round(min(lefts) - max(first - max(rights), 0)), 0)


def _column_headers(grid: TableGrid, items: list[Item], filled: set[int]) -> int | None:
    """The top edge of a line of column headers just above the grid (the lowest line of text
    above it, each entry within a column of its own), or None."""
    top = grid.ys[0]
    near = [
        item
        for item in items
        if item.top + item.bottom < 2 * top <= 2 * (item.bottom + HEADER_REACH * item.height)
        and grid.xs[0] < (item.left + item.right) / 2 < grid.xs[-1]
    ]
    if not near:
        return None
    line = [(i, (i.left + i.right) / 2, i.left, i.right) for i in group_rows(near)[-1].items]
    entries = _one_each(grid.xs, line)
    if entries is None or len(entries) < max(2, HEADER_SHARE * len(filled | set(entries))):
        return None
    tops, bottoms = [i.top for i in entries.values()], [i.bottom for i in entries.values()]
    return max(round(min(tops) - max(top - max(bottoms), 0)), 0)


def _one_each(
    bounds: tuple[int, ...], entries: list[tuple[Item, float, float, float]]
) -> dict[int, Item] | None:
    """The entries (item, middle, start, end along the bounds) by the band between two
    bounds that holds each; None when one reaches well into the next band (text across two
    rows or columns) or a band holds two."""
    bands: dict[int, Item] = {}
    for item, middle, start, end in entries:
        index = sum(1 for bound in bounds if bound <= middle) - 1
        slack = (end - start) / 4
        if start < bounds[index] - slack or end > bounds[index + 1] + slack or index in bands:
            return None
        bands[index] = item
    return bands


def _median_step(bounds: tuple[int, ...]) -> float:
    return statistics.median(b - a for a, b in pairwise(bounds))


def column_name(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA, as spreadsheets name their columns."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = string.ascii_uppercase[rest] + name
    return name


def column_index(name: str) -> int:
    """A -> 0, Z -> 25, AA -> 26."""
    index = 0
    for letter in name:
        index = index * 26 + string.ascii_uppercase.index(letter) + 1
    return index - 1


def names_in_sequence(items: list[Item]) -> list[Item]:
    """The items, each misread column name in a line of names in sequence given the name its
    place in the sequence gives."""
    renamed: dict[int, str] = {}
    for row in group_rows(items):
        renamed.update(_misread_names(row.items))
    if not renamed:
        return items
    return [
        replace(item, fragment=replace(item.fragment, text=renamed[id(item)]))
        if id(item) in renamed and item.fragment is not None
        else item
        for item in items
    ]


def _misread_names(line: list[Item]) -> dict[int, str]:
    """id -> name of the entries between two names that are as far apart in the sequence as
    on the line, where the entry reads as something else of the name's length ("H 1 J")."""
    names = [
        (place, column_index(item.text))
        for place, item in enumerate(line)
        if COLUMN_NAME.fullmatch(item.text)
    ]
    pairs = list(pairwise(names))
    agree = [(a, b) for a, b in pairs if b[1] - a[1] == b[0] - a[0]]
    if len(names) < MIN_NAMES or len(agree) < NAMES_AGREE * len(pairs):
        return {}
    renamed = {}
    for (start, index), (end, _) in agree:
        for place in range(start + 1, end):
            name = column_name(index + place - start)
            if len(line[place].text) == len(name):
                renamed[id(line[place])] = name
    return renamed
