"""Tables in the layout: text inside drawn grids, and runs of rows aligned in columns."""

from __future__ import annotations

import re
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
from desktop.core.ocr.models import Box, OcrTable, TextFragment
from desktop.core.ocr.ruled_tables import TableGrid
from desktop.core.ocr.sheet_headers import with_headers


def claim_ruled_tables(items: list[Item], grids: list[TableGrid], angle: float) -> list[Item]:
    """Replace the fragments inside each grid by one item carrying the table's cells; a
    spreadsheet's row and column headers beside the grid become its first column and row."""
    for grid in grids:
        cells, remaining = _claimed(items, grid)
        if _ruled_table(grid, cells) is None:
            continue  # boxes around a few words (buttons, a frame): not a table
        others = [other for other in grids if other is not grid]
        outside = [  # in the grid's coordinates; another grid's cells are not headers
            Item(*item.fragment.box, fragment=item.fragment)
            for item in remaining
            if item.fragment and all(_cell(other, item.fragment) is None for other in others)
        ]
        headed = with_headers(grid, outside, {row for row, _ in cells}, {c for _, c in cells})
        if headed.grid != grid:
            grid = headed.grid
            cells, remaining = _claimed(items, grid)
        ruled = _ruled_table(grid, cells, headed.rows, headed.columns)
        if ruled is None:
            continue
        corners = rotate(box_corners(grid.box), angle) if angle else box_corners(grid.box)
        xs, ys = [x for x, _ in corners], [y for _, y in corners]
        items = [*remaining, Item(min(xs), min(ys), max(xs), max(ys), ruled=ruled)]
    return items


def _claimed(
    items: list[Item], grid: TableGrid
) -> tuple[dict[tuple[int, int], list[TextFragment]], list[Item]]:
    """The fragments in each (row, column) cell of the grid, and the items outside it."""
    cells: dict[tuple[int, int], list[TextFragment]] = {}
    remaining = []
    for item in items:
        cell = _cell(grid, item.fragment) if item.fragment else None
        if cell is None or item.fragment is None:
            remaining.append(item)
        else:
            cells.setdefault(cell, []).append(item.fragment)
    return cells, remaining


def _cell(grid: TableGrid, fragment: TextFragment) -> tuple[int, int] | None:
    left, top, right, bottom = fragment.box
    return grid.cell_of((left + right) / 2, (top + bottom) / 2)


# A frame around fewer text items is a button or a field, not a block.
MIN_FRAMED_ITEMS = 3


def framed_blocks(
    items: list[Item], frames: list[TableGrid]
) -> tuple[list[Item], list[list[Item]]]:
    """The items outside every frame, and those inside each frame that holds a block of text
    (a framed key-value block beside an item table, whose lines would otherwise join the
    table's rows); a frame around everything changes nothing."""
    blocks = []
    for frame in frames:
        inside = [
            item
            for item in items
            if item.fragment is not None
            and frame.cell_of((item.left + item.right) / 2, item.centre_y) is not None
        ]
        if MIN_FRAMED_ITEMS <= len(inside) < len(items):
            chosen = {id(item) for item in inside}
            items = [item for item in items if id(item) not in chosen]
            blocks.append(inside)
    return items, blocks


def _ruled_table(
    grid: TableGrid,
    cells: dict[tuple[int, int], list[TextFragment]],
    header_rows: int = 0,
    header_columns: int = 0,
) -> RuledTable | None:
    """The grid's non-empty rows; None unless most rows have two or more filled cells, not
    counting the headers (a sheet's empty rows below its data hold only their numbers)."""
    rows, row_info, cell_boxes = [], [], []
    columns = range(len(grid.xs) - 1)
    for row in range(len(grid.ys) - 1):
        in_row = [cells.get((row, column), []) for column in columns]
        fragments = [fragment for cell in in_row for fragment in cell]
        if fragments:
            rows.append(tuple(_cell_text(cell) for cell in in_row))
            box = (grid.xs[0], grid.ys[row], grid.xs[-1], grid.ys[row + 1])
            row_info.append((box, statistics.mean(f.confidence for f in fragments)))
            top, bottom = grid.ys[row], grid.ys[row + 1]
            cell_boxes.append(tuple((grid.xs[c], top, grid.xs[c + 1], bottom) for c in columns))
    bodies = [[text for text in row[header_columns:] if text] for row in rows[header_rows:]]
    filled_rows = sum(1 for body in bodies if len(body) >= 2)
    body_rows = sum(1 for body in bodies if body)
    if body_rows < 2 or filled_rows * 2 < body_rows:
        return None
    table = OcrTable(rows=tuple(rows), box=grid.box, ruled=True, cell_boxes=tuple(cell_boxes))
    return RuledTable(table, tuple(row_info))


def _cell_text(fragments: list[TextFragment]) -> str:
    ordered = sorted(fragments, key=lambda f: (f.box[1] + f.box[3]) / 2)
    return " ".join(row.text for row in group_rows([deskewed(f, 0.0) for f in ordered]))


# Columns apart by at least this share of the text height are split by their gap alone;
# narrower gaps (down to NARROW_GAP) split where cells line up on one side of them.
WIDE_GAP = 0.8
NARROW_GAP = 0.2
# Cells whose edges lie this close (share of the text height) are aligned, and it takes this
# many of them to make an alignment edge.
ALIGN_TOLERANCE = 0.25
MIN_ALIGNED = 3


def column_gaps(rows: list[Row], text_height: float) -> list[tuple[float, float]]:
    """The empty vertical bands between a run's columns. Right-aligned numbers set close
    together ("Qty" beside "Unit price") leave a gap narrower than a wide one: it counts when
    an alignment edge borders it, the right ends (or the left starts) of cells in several
    rows lining up on it."""
    items = items_of(rows)
    return [
        gap
        for gap in vertical_gaps(items, NARROW_GAP * text_height)
        if gap[1] - gap[0] >= WIDE_GAP * text_height or _borders_alignment(items, gap, text_height)
    ]


def _borders_alignment(items: list[Item], gap: tuple[float, float], text_height: float) -> bool:
    tolerance = ALIGN_TOLERANCE * text_height
    ends = sum(1 for item in items if abs(item.right - gap[0]) <= tolerance)
    starts = sum(1 for item in items if abs(item.left - gap[1]) <= tolerance)
    return max(ends, starts) >= MIN_ALIGNED


def _starts_item_rows(rows: list[Row], start: int, end: int) -> bool:
    """rows[end] starts item rows below a key-value block ("Invoice No. / Issue date / ...":
    two cells a row, one row or more: a statement's "Period  01.03. - 31.03.") that must not
    become the first rows of the items' table."""
    pairs = [len(row.items) for row in rows[start:end]]
    following = [len(row.items) for row in rows[end : end + 2]]
    return (
        all(count == 2 for count in pairs)
        and len(following) == 2
        and all(count >= 3 for count in following)
    )


def _address_lines(rows: list[Row], end: int) -> bool:
    """rows[end] is the second of two one-cell rows in a row: a block of text lines (the
    ship-to address under an invoice's header fields) that a table does not run through; a
    table's lone cells (a wrapped description, an empty row's one value) come one at a time."""
    return end >= 1 and len(rows[end].items) == 1 and len(rows[end - 1].items) == 1


# A message's header fields (RFC 5322 and the names mail clients show): a block of them,
# "From:  Alex" a row, is a header to read line by line, not a two-column table.
MAIL_HEADER = re.compile(
    r"(?:from|to|cc|bcc|date|sent|subject|reply-to|sender|organi[sz]ation|x-mailer|"
    r"message-id|in-reply-to|newsgroups|attachments?):",
    re.IGNORECASE,
)


def _key_value_block_end(rows: list[Row], start: int, end: int, text_height: float) -> int:
    """Where a key-value block at the top of the run ends ("Invoice No.  INV-1042" / "Date" /
    "Due": two cells a row, the values left-aligned), when the rows below it are items whose
    first cells reach over the block's values ("Consulting services for March"): they do not
    share its columns, and joined they gave the block empty cells and its first row as the
    items' header. Else end."""
    block = start
    value_left = rows[start].items[-1].left
    while (
        block < end
        and len(rows[block].items) == 2
        and abs(rows[block].items[1].left - value_left) <= ALIGN_TOLERANCE * text_height
    ):
        block += 1
    if block - start < 2 or end - block < 2:
        return end
    label_right = max(row.items[0].right for row in rows[start:block])
    value_left = min(row.items[1].left for row in rows[start:block])
    reach_over = any(
        item.left < label_right and item.right > value_left
        for row in rows[block:end]
        for item in row.items
    )
    return block if reach_over else end


def _mail_headers(run: list[Row]) -> bool:
    """Two or more rows, and most of the run's, are a header field's name then its value (a
    pager's header block, maybe with its key bar above it)."""
    fields = sum(1 for row in run if MAIL_HEADER.fullmatch(row.items[0].text))
    return fields >= 2 and 2 * fields > len(run)


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
        and not _starts_item_rows(rows, start, end)
        and not _address_lines(rows, end)
        and column_gaps(rows[start : end + 1], text_height)
    ):
        end += 1
    while (
        end > start
        and (
            len(rows[end - 1].items) < 2  # a trailing one-cell row is the paragraph after it
            or _bridges_columns(rows[start : end - 1], rows[end - 1], text_height)
        )
    ):
        end -= 1
    end = _key_value_block_end(rows, start, end, text_height)
    run = rows[start:end]
    multi_cell = sum(1 for row in run if len(row.items) >= 2)
    columns = len(column_gaps(run, text_height)) + 1
    short_cells = statistics.mean(len(item.text) for item in items_of(run)) <= 40
    if (
        short_cells
        and not _mail_headers(run)
        and (multi_cell >= 3 or (multi_cell >= 2 and columns >= 3))
    ):
        return end
    return start


def table_from_rows(rows: list[Row], text_height: float) -> OcrTable:
    """Cells by columns. A bold header's boxes can reach across a gap that every body row
    leaves (measured: a right-aligned "Qty" boxed 13 px into "Unit price"): then the body's
    columns hold, and each header cell goes to the column under its middle."""
    gaps = column_gaps(rows, text_height)
    body_gaps = column_gaps(rows[1:], text_height) if len(rows) >= 3 else gaps
    header_by_middle = len(body_gaps) > len(gaps)
    gaps = body_gaps if header_by_middle else gaps
    cells: list[tuple[str, ...]] = []
    cell_boxes: list[tuple[Box | None, ...]] = []
    for number, row in enumerate(rows):
        parts: list[list[Item]] = [[] for _ in range(len(gaps) + 1)]
        by_middle = header_by_middle and number == 0
        for item in _words_across(row.items, gaps) if by_middle else row.items:
            parts[_column_of(item, gaps, by_middle=by_middle)].append(item)
        cells.append(tuple(" ".join(item.text for item in part) for part in parts))
        cell_boxes.append(tuple(_fragments_box(part) for part in parts))
    boxes = [item.fragment.box for item in items_of(rows) if item.fragment]
    return OcrTable(
        rows=tuple(cells), box=union_box(boxes), ruled=False, cell_boxes=tuple(cell_boxes)
    )


def _bridges_columns(above: list[Row], row: Row, text_height: float) -> bool:
    """`row` has a cell reaching across a column gap that the two or more rows `above` share
    (a price list's footnote, its last word boxed apart: "Prices in CHF excl." "VAT."):
    under the table it is the text after it; joined, it merged two columns in every row."""
    if len(above) < 2:
        return False
    gaps = column_gaps(above, text_height)
    return any(_reaches_across(item, gaps) for item in row.items)


def _reaches_across(item: Item, gaps: list[tuple[float, float]]) -> bool:
    """The item starts before one of the column gaps and ends after it."""
    return any(item.left < a and item.right > b for a, b in gaps)


def _words_across(items: list[Item], gaps: list[tuple[float, float]]) -> list[Item]:
    """Header fragments that reach across a column gap ("Qty Unit price" boxed as one), cut
    into words placed by their share of the characters."""
    words: list[Item] = []
    for item in items:
        fragment = item.fragment
        if fragment is None or not _reaches_across(item, gaps):
            words.append(item)
            continue
        per_char = item.width / max(len(fragment.text), 1)
        for match in re.finditer(r"\S+", fragment.text):
            left, right = item.left + match.start() * per_char, item.left + match.end() * per_char
            box = (round(left), round(item.top), round(right), round(item.bottom))
            piece = TextFragment.from_box(match.group(), box, fragment.confidence)
            words.append(Item(left, item.top, right, item.bottom, fragment=piece))
    return words


def _column_of(item: Item, gaps: list[tuple[float, float]], *, by_middle: bool) -> int:
    if by_middle:
        middle = (item.left + item.right) / 2
        return sum(1 for left, right in gaps if middle >= (left + right) / 2)
    return sum(1 for _, right in gaps if item.left >= right)


def _fragments_box(items: list[Item]) -> Box | None:
    boxes = [item.fragment.box for item in items if item.fragment]
    return union_box(boxes) if boxes else None
