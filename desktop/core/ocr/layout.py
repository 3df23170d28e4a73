"""Reading order and structure: text fragments -> rows -> paragraphs, columns, code blocks and
tables, as OcrLines. All geometry is done in deskewed coordinates, so a slightly rotated photo
groups its lines like a straight page.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from desktop.core.ocr.decorations import without_decorations
from desktop.core.ocr.layout_items import (
    Item,
    Row,
    RuledTable,
    deskewed,
    group_rows,
    skew_angle,
    union_box,
)
from desktop.core.ocr.layout_tables import (
    aligned_table_end,
    claim_ruled_tables,
    framed_blocks,
    table_from_rows,
)
from desktop.core.ocr.models import Box, LineKind, OcrLine, OcrTable, TextFragment
from desktop.core.ocr.panes import PaneRule, split_panes
from desktop.core.ocr.reading_order import Region, segment
from desktop.core.ocr.ruled_tables import TableGrid
from desktop.core.ocr.sheet_headers import names_in_sequence

# Detector boxes extend past the glyphs by about this share of their height, both sides
# together.
BOX_MARGIN = 0.2
# Characters that are common in source code and rare in prose.
CODE_SYMBOLS = frozenset("{}()[];=<>#/\\\"'_:$&|*+")


@dataclass
class Layout:
    lines: list[OcrLine] = field(default_factory=list)
    tables: list[OcrTable] = field(default_factory=list)


def arrange(
    fragments: Sequence[TextFragment],
    grids: Iterable[TableGrid] = (),
    panes: Sequence[PaneRule] = (),
) -> Layout:
    """Order fragments for reading and group them into lines, paragraphs and tables; `panes`:
    the lines drawn between a window's panes (`panes.find_pane_rules`)."""
    fragments = without_decorations(list(fragments))
    angle = skew_angle(fragments)
    items = names_in_sequence([deskewed(fragment, angle) for fragment in fragments])
    grids = list(grids)
    items = claim_ruled_tables(items, [grid for grid in grids if not grid.is_frame], angle)
    text_heights = [item.height for item in items if item.fragment]
    if not text_heights:
        return _emit_tables_only(items)
    builder = _LineBuilder(statistics.median(text_heights))
    items, framed = framed_blocks(items, [grid for grid in grids if grid.is_frame])
    # A window's panes are split first; a tilted photo has none to speak of.
    parts = split_panes(items, list(panes), builder.text_height) if panes and not angle else None
    if parts is None:
        regions = segment(items, builder.text_height) if items else []
    else:
        regions = [
            replace(region, column=index, from_column_split=True)
            for index, part in enumerate(parts)
            for region in segment(part, builder.text_height, index)
        ]
    for block in framed:
        regions = _with_block(regions, segment(block, builder.text_height))
    for region in regions:
        builder.add_region(region)
    return builder.layout


def _with_block(regions: list[Region], block: list[Region]) -> list[Region]:
    """A framed block's regions, read before the first region below its top that shares its
    columns (a note box above the text), else after all (a box beside a table). A region with
    rows above the block and rows below it that share its columns (a terminal UI's menu line
    and key bar around its panes) is read in two parts, the block between them."""
    top = min(item.top for region in block for item in region.items)
    bottom = max(item.bottom for region in block for item in region.items)
    left = min(item.left for region in block for item in region.items)
    right = max(item.right for region in block for item in region.items)
    for index, region in enumerate(regions):
        upper = [item for item in region.items if item.bottom <= top]
        lower = [item for item in region.items if item.top >= bottom]
        if (
            upper
            and lower
            and len(upper) + len(lower) == len(region.items)
            and any(item.left < right and item.right > left for item in lower)
        ):
            parts = [replace(region, items=upper), replace(region, items=lower)]
            return [*regions[:index], parts[0], *block, parts[1], *regions[index + 1 :]]
    for index, region in enumerate(regions):
        below = min(item.top for item in region.items) >= top
        shared = any(item.left < right and item.right > left for item in region.items)
        if below and shared:
            return [*regions[:index], *block, *regions[index:]]
    return [*regions, *block]


class _LineBuilder:
    """Turns regions, in reading order, into numbered paragraphs of OcrLines."""

    def __init__(self, text_height: float) -> None:
        self.text_height = text_height
        self.layout = Layout()
        self.paragraph = -1

    def add_region(self, region: Region) -> None:
        if region.plot_labels:
            self._add_plot_labels(region)
            return
        rows = group_rows(region.items)
        left = min(row.left for row in rows)
        char_width = _char_width(rows, self.text_height)
        index = 0
        while index < len(rows):
            row = rows[index]
            if row.table is not None:
                self._add_table(row.table, region.column)
                index += 1
                continue
            end = aligned_table_end(rows, index, self.text_height)
            if end > index:
                self._add_aligned_table(rows[index:end], region.column)
                index = end
                continue
            end = index + 1
            while end < len(rows) and not self._breaks(rows[end - 1], rows[end]):
                if aligned_table_end(rows, end, self.text_height) > end:
                    break
                end += 1
            self._add_paragraph(rows[index:end], region.column, left, char_width)
            index = end

    def _add_plot_labels(self, region: Region) -> None:
        """A chart's data labels, left to right, one paragraph. A lone letter among them is a
        piece of the drawn line (a line chart's peak read as "A")."""
        self.paragraph += 1
        for item in sorted(region.items, key=lambda i: i.left):
            if item.fragment is None or (len(item.text) == 1 and not item.text.isdigit()):
                continue
            self.layout.lines.append(
                OcrLine(
                    text=item.text,
                    box=item.fragment.box,
                    confidence=item.fragment.confidence,
                    paragraph=self.paragraph,
                    column=region.column,
                )
            )

    def _breaks(self, previous: Row, row: Row) -> bool:
        """A blank line, a change of text size, or a ruled table starts a new paragraph."""
        if row.table is not None:
            return True
        smaller = min(previous.height, row.height)
        if max(previous.height, row.height) > 1.3 * smaller:
            return True
        return row.top - previous.bottom > 0.6 * smaller

    def _add_paragraph(self, rows: list[Row], column: int, left: float, char_width: float) -> None:
        self.paragraph += 1
        indents = [round((row.left - left) / char_width) for row in rows]
        kind = self._kind(rows, indents)
        for row, indent in zip(rows, indents, strict=True):
            text = _row_text(row, char_width if kind == "code" else None)
            self.layout.lines.append(
                OcrLine(
                    text=text,
                    box=union_box(item.fragment.box for item in row.items if item.fragment),
                    confidence=statistics.mean(
                        item.fragment.confidence for item in row.items if item.fragment
                    ),
                    paragraph=self.paragraph,
                    column=column,
                    indent=indent if kind == "code" else 0,
                    kind=kind,
                )
            )

    def _kind(self, rows: list[Row], indents: list[int]) -> LineKind:
        text = "".join(row.text for row in rows)
        symbols = sum(1 for char in text if char in CODE_SYMBOLS) / max(len(text), 1)
        indented = min(indents) != max(indents)
        if (indented and symbols >= 0.04) or (len(rows) >= 2 and symbols >= 0.1):
            return "code"
        height = statistics.mean(row.height for row in rows)
        if len(rows) <= 2 and height >= 1.35 * self.text_height and len(text) <= 120:
            return "heading"
        return "text"

    def _add_table(self, ruled: RuledTable, column: int) -> None:
        self._add_table_lines(ruled.table, ruled.rows, column)

    def _add_aligned_table(self, rows: list[Row], column: int) -> None:
        row_info = []
        for row in rows:
            fragments = [item.fragment for item in row.items if item.fragment]
            confidence = statistics.mean(fragment.confidence for fragment in fragments)
            row_info.append((union_box(fragment.box for fragment in fragments), confidence))
        self._add_table_lines(table_from_rows(rows, self.text_height), row_info, column)

    def _add_table_lines(
        self, table: OcrTable, rows: Sequence[tuple[Box, float]], column: int
    ) -> None:
        """One OcrLine per table row; its text is the cells separated by tabs."""
        self.paragraph += 1
        index = len(self.layout.tables)
        self.layout.tables.append(table)
        for cells, (box, confidence) in zip(table.rows, rows, strict=True):
            self.layout.lines.append(
                OcrLine(
                    text="\t".join(cells),
                    box=box,
                    confidence=confidence,
                    paragraph=self.paragraph,
                    column=column,
                    kind="table",
                    table=index,
                )
            )


def _char_width(rows: list[Row], text_height: float) -> float:
    """Typical advance of one character, from the rows' widths and lengths.

    With fragments of several lengths, the slope of width against length: the detector's
    margins and the glyphs' side bearings cancel out (a per-fragment ratio read monospace
    code about 3 % narrow, enough to put an indentation at 4.5 characters). Otherwise each
    fragment's width less the detector's margin (about a tenth of the text height on each
    side, measured on rendered monospace code), divided by its length.
    """
    items = [item for row in rows for item in row.items if len(item.text) >= 4]
    lengths = [len(item.text) for item in items]
    widths = [(item.width - BOX_MARGIN * item.height) / len(item.text) for item in items]
    if not widths:
        return max(text_height * 0.5, 1.0)
    ratio = max(statistics.median(widths), 1.0)
    if len(items) >= 3 and max(lengths) - min(lengths) >= 4:
        slope = statistics.linear_regression(lengths, [item.width for item in items]).slope
        if 0.8 * ratio < slope < 1.25 * ratio:  # proportional text can scatter: keep the ratio
            return slope
    return ratio


def _row_text(row: Row, char_width: float | None) -> str:
    """Join a row's fragments; in code, wide gaps keep their width as spaces."""
    parts = [row.items[0].text]
    for before, item in pairwise(row.items):
        spaces = 1
        if char_width is not None:
            gap = item.left - before.right + BOX_MARGIN * item.height
            spaces = max(1, round(gap / char_width))
        parts.append(" " * spaces + item.text)
    return "".join(parts)


def _emit_tables_only(items: list[Item]) -> Layout:
    """All text sat inside ruled tables: the tables, top to bottom."""
    builder = _LineBuilder(1.0)
    for item in sorted(items, key=lambda i: i.top):
        if item.ruled is not None:
            builder._add_table(item.ruled, 0)
    return builder.layout
