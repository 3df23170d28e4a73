"""The invisible text of a searchable PDF: where each recognised line or cell goes, and the
font its characters are set in.

As OCRmyPDF and Tesseract do it: text in render mode 3 (neither filled nor stroked), in a
"glyphless" Type0 font whose character codes are the UTF-16 code units of the text and whose
ToUnicode map is the identity, so any script the OCR reads is extracted as it was read. The
font is not embedded: nothing of it is ever drawn. Its widths are Helvetica's for Latin
text and a full em for CJK, so the characters of a line fall near the glyphs they stand for
(Liberation Sans and Arial share Helvetica's widths); each run is stretched to its box.

Coordinates here are the page image's pixels (y down); the page maps them onto itself with
one `cm` (see searchable_pdf.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from PIL import Image

from desktop.core.ocr.models import Box, OcrLine, OcrResult, OcrTable

FONT_NAME = "GlyphLessFont"
RESOURCE_NAME = "/FDeskLensOCR"  # unlikely to clash with a font of the page it is added to
ASCENT, DESCENT = 800, -200  # per 1000 em: a box's height spans the font's
DEFAULT_WIDTH = 556
# Helvetica's advance widths for " " to "~" (its AFM metrics).
_ASCII_WIDTHS = (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
)  # fmt: skip
_LATIN_END = 0x17F  # Latin-1 and Latin Extended-A: the accented letter's base letter's width
# East Asian wide ranges (Hangul, CJK, kana, fullwidth forms): a full em.
_WIDE = (
    (0x1100, 0x115F), (0x2E80, 0x303E), (0x3041, 0x33FF), (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF), (0xA000, 0xA4CF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F), (0xFF00, 0xFF60), (0xFFE0, 0xFFE6),
)  # fmt: skip
# A ruled cell's box is its grid rectangle: text much narrower than that is placed at its
# natural width against the side it is likely aligned to.
_LOOSE_CELL = 1.3
_SPACE = f"<{' '.encode('utf-16-be').hex()}> Tj"  # set where the previous run ended
_GRID_INSET = 3  # px: a ruled cell's own lines are left out of its ink
_INK_CONTRAST = 60  # grey levels from the cell's background that count as text
_NUMERIC = re.compile(r"[-+(]?[$€£¥]?\d[\d,.' ]*%?\)?")


def advance(char: str) -> int:
    """The width of one character in the font, per 1000 em (the font's W array says the same)."""
    code = ord(char)
    if code < 0x20:
        return DEFAULT_WIDTH
    if code <= 0x7E:
        return _ASCII_WIDTHS[code - 0x20]
    if code <= _LATIN_END:
        base = unicodedata.normalize("NFKD", char)[:1]
        return advance(base) if base and ord(base) <= 0x7E else DEFAULT_WIDTH
    if any(first <= code <= last for first, last in _WIDE):
        return 1000
    return DEFAULT_WIDTH


def widths_array() -> list[int | list[int]]:
    """The CIDFont's W array: one entry per Latin code, ranges for the wide scripts."""
    latin = [advance(chr(code)) for code in range(0x20, _LATIN_END + 1)]
    array: list[int | list[int]] = [0x20, latin]
    for first, last in _WIDE:
        array += [first, last, 1000]
    return array


def to_unicode_cmap() -> bytes:
    """Code (a UTF-16 code unit) -> the same Unicode value, in ranges that each stay within
    one high byte as the CMap syntax asks."""
    ranges = [f"<{high:02X}00> <{high:02X}FF> <{high:02X}00>" for high in range(256)]
    blocks = []
    for start in range(0, len(ranges), 100):
        chunk = ranges[start : start + 100]
        blocks.append(f"{len(chunk)} beginbfrange\n" + "\n".join(chunk) + "\nendbfrange")
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        + "\n".join(blocks)
        + "\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode("ascii")


@dataclass(frozen=True)
class Run:
    """One piece of text set on one box (a line, or a table cell)."""

    text: str
    box: Box
    line: int  # the index of its line in the result: the cells of a row share it


InkFinder = Callable[[Box], Box | None]


def ink_finder(image: Image.Image) -> InkFinder:
    """Where the text is inside a box of the page image: the bounding box of the pixels that
    differ from the box's background (its median), a few pixels in from its edges (a ruled
    cell's grid lines). None when the box holds no ink."""
    gray = np.asarray(image.convert("L"), dtype=np.int16)

    def find(box: Box) -> Box | None:
        left, top = max(box[0] + _GRID_INSET, 0), max(box[1] + _GRID_INSET, 0)
        right, bottom = box[2] - _GRID_INSET, box[3] - _GRID_INSET
        region = gray[top:bottom, left:right]
        if region.size == 0:
            return None
        ink = np.abs(region - np.median(region)) > _INK_CONTRAST
        rows, columns = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
        if rows.size == 0:
            return None
        return (
            left + int(columns[0]),
            top + int(rows[0]),
            left + int(columns[-1]) + 1,
            top + int(rows[-1]) + 1,
        )

    return find


def runs(result: OcrResult, ink: InkFinder | None = None) -> Iterator[Run]:
    """The page's text in reading order: each line on its box, a table row cell by cell (a
    ruled cell on its ink when `ink` can find it)."""
    used_rows: dict[int, set[int]] = {}
    for number, line in enumerate(result.lines):
        if not line.text.strip():
            continue
        cells = _table_cells(number, line, result.tables, used_rows, ink)
        if cells is None:
            yield Run(line.text.replace("\t", " "), line.box, number)
        else:
            yield from cells


def content(result: OcrResult, image: Image.Image | None = None) -> bytes:
    """The text-showing operators for the page (pixel coordinates, y down); `image` (the page
    as the OCR read it) places the text of ruled cells on its ink."""
    ops = ["BT", "3 Tr"]
    previous: Run | None = None
    for run in runs(result, ink_finder(image) if image is not None else None):
        if previous is not None and previous.line == run.line:
            ops.append(_SPACE)  # between the cells of a row, however far apart they are
        op = _show(run)
        if op:
            ops.append(op)
            previous = run
    ops.append("ET")
    return ("\n".join(ops) + "\n").encode("ascii")


def encode(text: str) -> bytes:
    """UTF-16BE code units; a character beyond the BMP (an emoji) becomes U+FFFD."""
    return "".join(c if ord(c) <= 0xFFFF else "\ufffd" for c in text).encode("utf-16-be")


def _show(run: Run) -> str:
    left, top, right, bottom = run.box
    size = bottom - top
    natural = sum(advance(c) for c in run.text) / 1000 * size
    if size <= 0 or right <= left or natural <= 0:
        return ""
    scale = (right - left) / natural
    baseline = bottom + DESCENT / 1000 * size
    matrix = " ".join(pdf_number(v) for v in (size * scale, 0, 0, -size, left, baseline))
    return f"/{RESOURCE_NAME[1:]} 1 Tf {matrix} Tm <{encode(run.text).hex()}> Tj"


def _table_cells(
    number: int,
    line: OcrLine,
    tables: list[OcrTable],
    used_rows: dict[int, set[int]],
    ink: InkFinder | None,
) -> list[Run] | None:
    """A table row's cells on their boxes; None when the row is not found in its table."""
    if line.table is None or line.table >= len(tables):
        return None
    table = tables[line.table]
    texts = tuple(line.text.split("\t"))
    used = used_rows.setdefault(line.table, set())
    row = next((n for n, cells in enumerate(table.rows) if cells == texts and n not in used), None)
    if row is None or not table.cell_boxes:
        return None
    used.add(row)
    cells = []
    for text, box in zip(table.rows[row], table.cell_boxes[row], strict=True):
        if text.strip() and box is not None:
            placed = box
            if table.ruled:
                found = ink(box) if ink is not None else None
                placed = found if found is not None else _cell_box(text, box, line.box)
            cells.append(Run(text, placed, number))
    return cells


def _cell_box(text: str, cell: Box, line: Box) -> Box:
    """A ruled cell's text box: the grid rectangle within the row's text, narrowed to the
    text's natural width when the cell is much wider than its text."""
    top, bottom = line[1], line[3]
    left, right = max(cell[0], line[0]), min(cell[2], line[2])
    if right <= left:
        left, right = cell[0], cell[2]
    height = bottom - top
    natural = round(sum(advance(c) for c in text) / 1000 * height)
    if natural <= 0 or right - left <= natural * _LOOSE_CELL:
        return left, top, right, bottom
    if _NUMERIC.fullmatch(text.strip()):
        return right - natural, top, right, bottom
    return left, top, left + natural, bottom


def pdf_number(value: float) -> str:
    """A number as a content stream writes it: at most 4 decimals, no trailing zeros."""
    return f"{value:.4f}".rstrip("0").rstrip(".") or "0"
