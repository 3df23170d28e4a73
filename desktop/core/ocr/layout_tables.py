"""Tables in the layout: text inside drawn grids, and runs of rows aligned in columns."""

from __future__ import annotations

import statistics

from desktop.core.ocr.layout_items import (
    Item,
    Row,
    RuledTable,
    box_corners,
    deskewed,
    group_rows,
    items_of,
    rotate,
    union_box,
    vertical_gaps,
)
from desktop.core.ocr.models import OcrTable, TextFragment
from desktop.core.ocr.ruled_tables import TableGrid


def claim_ruled_tables(items: list[Item], grids: list[TableGrid], angle: float) -> list[Item]:
    """Replace the fragments inside each grid by one item carrying the table's cells."""
    for grid in grids:
        cells: dict[tuple[int, int], list[TextFragment]] = {}
        remaining = []
        for item in items:
            fragment = item.fragment
            left, top, right, bottom = fragment.box if fragment else (0, 0, 0, 0)
            cell = grid.cell_of((left + right) / 2, (top + bottom) / 2) if fragment else None
            if cell is None:
                remaining.append(item)
            else:
                cells.setdefault(cell, []).append(fragment)
        ruled = _ruled_table(grid, cells)
        if ruled is None:
            continue  # boxes around a few words (buttons, a frame): not a table
        corners = rotate(box_corners(grid.box), angle) if angle else box_corners(grid.box)
        xs, ys = [x for x, _ in corners], [y for _, y in corners]
        items = [*remaining, Item(min(xs), min(ys), max(xs), max(ys), ruled=ruled)]
    return items


def _ruled_table(
    grid: TableGrid, cells: dict[tuple[int, int], list[TextFragment]]
) -> RuledTable | None:
    """The grid's non-empty rows; None unless most rows have two or more filled cells."""
    rows, row_info = [], []
    for row in range(len(grid.ys) - 1):
        in_row = [cells.get((row, column), []) for column in range(len(grid.xs) - 1)]
        fragments = [fragment for cell in in_row for fragment in cell]
        if fragments:
            rows.append(tuple(_cell_text(cell) for cell in in_row))
            box = (grid.xs[0], grid.ys[row], grid.xs[-1], grid.ys[row + 1])
            row_info.append((box, statistics.mean(f.confidence for f in fragments)))
    filled_rows = sum(1 for row in rows if sum(1 for text in row if text) >= 2)
    if len(rows) < 2 or filled_rows * 2 < len(rows):
        return None
    table = OcrTable(rows=tuple(rows), box=grid.box, ruled=True)
    return RuledTable(table, tuple(row_info))


def _cell_text(fragments: list[TextFragment]) -> str:
    ordered = sorted(fragments, key=lambda f: (f.box[1] + f.box[3]) / 2)
    return " ".join(row.text for row in group_rows([deskewed(f, 0.0) for f in ordered]))


def aligned_table_end(rows: list[Row], start: int, text_height: float) -> int:
    """End (exclusive) of the table starting at rows[start], or start when there is none.

    A table is a run of rows whose cells stay inside common columns: the empty vertical bands
    shared by every row of the run. Single-cell rows (an empty cell) may sit inside the run.
    """
    if len(rows[start].items) < 2 or rows[start].table is not None:
        return start
    end = start + 1
    while (
        end < len(rows)
        and rows[end].table is None
        and rows[end].top - rows[end - 1].bottom < 2.5 * text_height
        and vertical_gaps(items_of(rows[start : end + 1]), 0.8 * text_height)
    ):
        end += 1
    while end > start and len(rows[end - 1].items) < 2:
        end -= 1  # a trailing one-cell row is the paragraph after the table
    run = rows[start:end]
    multi_cell = sum(1 for row in run if len(row.items) >= 2)
    columns = len(vertical_gaps(items_of(run), 0.8 * text_height)) + 1
    short_cells = statistics.mean(len(item.text) for item in items_of(run)) <= 40
    if short_cells and (multi_cell >= 3 or (multi_cell >= 2 and columns >= 3)):
        return end
    return start


def table_from_rows(rows: list[Row], text_height: float) -> OcrTable:
    gaps = vertical_gaps(items_of(rows), 0.8 * text_height)
    bounds = [right for _, right in gaps]
    cells: list[tuple[str, ...]] = []
    for row in rows:
        texts: list[list[str]] = [[] for _ in range(len(bounds) + 1)]
        for item in row.items:
            texts[sum(1 for bound in bounds if item.left >= bound)].append(item.text)
        cells.append(tuple(" ".join(parts) for parts in texts))
    boxes = [item.fragment.box for item in items_of(rows) if item.fragment]
    return OcrTable(rows=tuple(cells), box=union_box(boxes), ruled=False)
