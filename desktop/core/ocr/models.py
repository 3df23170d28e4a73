"""OCR results: fragments before layout, lines and tables after it, and their text renderings."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from desktop.core.ocr.cells import delimited
from desktop.core.ocr.codes import OcrCode, with_codes

Box = tuple[int, int, int, int]  # left, top, right, bottom in image pixels
LineKind = Literal["text", "heading", "code", "table"]

PAGE_BREAK = "\f"  # between pages in plain text, as pdftotext does


@dataclass(frozen=True)
class TextFragment:
    """One run of text as the detector boxed it (or a PDF text layer gave it), before layout."""

    text: str
    quad: tuple[tuple[float, float], ...]  # 4 corners, clockwise from top-left
    confidence: float = 1.0

    @classmethod
    def from_box(cls, text: str, box: Box, confidence: float = 1.0) -> TextFragment:
        left, top, right, bottom = box
        return cls(text, ((left, top), (right, top), (right, bottom), (left, bottom)), confidence)

    @property
    def box(self) -> Box:
        xs = [x for x, _ in self.quad]
        ys = [y for _, y in self.quad]
        return round(min(xs)), round(min(ys)), round(max(xs)), round(max(ys))


@dataclass(frozen=True)
class OcrLine:
    """One line of text in reading order."""

    text: str  # table rows: the cells separated by tabs (pastes into a spreadsheet)
    box: Box
    confidence: float  # mean recognition confidence, 0..1 (1.0 for a PDF text layer)
    paragraph: int  # paragraph number in reading order, from 0
    column: int = 0  # 0 for full-width text; 0, 1, ... left to right in a multi-column region
    indent: int = 0  # leading spaces that reproduce the indentation of code-like blocks
    kind: LineKind = "text"
    table: int | None = None  # index into OcrResult.tables for a table row


@dataclass(frozen=True)
class OcrTable:
    rows: tuple[tuple[str, ...], ...]  # every row has the same number of cells
    box: Box
    ruled: bool  # found from drawn grid lines rather than from aligned columns
    # The box of each cell, row by row like `rows`: a ruled cell's grid rectangle, an aligned
    # cell's text; None for an empty aligned cell. Empty when not known.
    cell_boxes: tuple[tuple[Box | None, ...], ...] = ()

    def cells(self) -> list[list[dict[str, Any]]]:
        """Rows of {"text", "box"} for JSON."""
        boxes = self.cell_boxes or tuple((None,) * len(row) for row in self.rows)
        return [
            [
                {"text": text, "box": list(box) if box is not None else None}
                for text, box in zip(row, row_boxes, strict=True)
            ]
            for row, row_boxes in zip(self.rows, boxes, strict=True)
        ]

    def markdown(self) -> str:
        """GitHub-flavoured Markdown table; the first row is the header."""
        cells = [[_markdown_cell(cell) for cell in row] for row in self.rows]
        lines = ["| " + " | ".join(row) + " |" for row in cells]
        lines.insert(1, "|" + "---|" * len(self.rows[0]))
        return "\n".join(lines)

    def csv(self) -> str:
        """The rows as CSV; a cell a spreadsheet would run as a formula is made inert."""
        return delimited(self.rows)


@dataclass
class OcrResult:
    """The text of one image (or PDF page), laid out in reading order."""

    lines: list[OcrLine]
    width: int
    height: int
    seconds: float
    source_name: str = ""
    tables: list[OcrTable] = field(default_factory=list)
    page: int | None = None  # 1-based page number when the image is a PDF page
    text_layer: bool = False  # read from the PDF's embedded text, not by OCR
    codes: list[OcrCode] = field(default_factory=list)  # QR codes and barcodes, top to bottom
    unsure_lines: int = 0  # lines found but read too unsurely to keep (see readability.py)

    def text(self) -> str:
        """Plain text: a blank line between paragraphs, code indentation kept; then the
        codes' "QR: ..." block."""
        text = "\n".join(_paragraph_lines(self.lines, markdown=False)).strip("\n")
        return with_codes(text, self.codes, markdown=False)

    def markdown(self) -> str:
        """Markdown: headings, fenced code blocks and tables where the layout shows them."""
        text = "\n".join(_paragraph_lines(self.lines, markdown=True, tables=self.tables))
        return with_codes(text.strip("\n"), self.codes, markdown=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source_name,
            "page": self.page,
            "width": self.width,
            "height": self.height,
            "seconds": round(self.seconds, 3),
            "text_layer": self.text_layer,
            "lines": [_line_dict(line) for line in self.lines],
            "tables": [
                {
                    "box": list(table.box),
                    "ruled": table.ruled,
                    "rows": [list(r) for r in table.rows],
                    "cells": table.cells(),
                }
                for table in self.tables
            ],
            "codes": [code.to_dict() for code in self.codes],
            "unsure_lines": self.unsure_lines,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


@dataclass
class OcrDocument:
    """All pages read from one file (a single page for an image)."""

    source_name: str
    pages: list[OcrResult]

    @property
    def seconds(self) -> float:
        return sum(page.seconds for page in self.pages)

    @property
    def tables(self) -> list[OcrTable]:
        return [table for page in self.pages for table in page.tables]

    def text(self) -> str:
        return f"\n{PAGE_BREAK}\n".join(page.text() for page in self.pages)

    def markdown(self) -> str:
        if len(self.pages) == 1:
            return self.pages[0].markdown()
        return "\n\n".join(
            f"<!-- page {page.page or number} -->\n\n{page.markdown()}"
            for number, page in enumerate(self.pages, start=1)
        )

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source_name, "pages": [page.to_dict() for page in self.pages]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


def _line_dict(line: OcrLine) -> dict[str, Any]:
    data = asdict(line)
    data["box"] = list(line.box)
    data["confidence"] = round(line.confidence, 4)
    return data


def _markdown_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _paragraph_lines(
    lines: list[OcrLine], *, markdown: bool, tables: list[OcrTable] | None = None
) -> list[str]:
    """Render lines paragraph by paragraph; blank lines separate paragraphs and blocks."""
    writer = _BlockWriter(markdown, tables or [])
    for line in lines:
        writer.add(line)
    return writer.finish()


class _BlockWriter:
    """Plain text or Markdown, one OcrLine at a time: code fences open and close around runs of
    code lines, a table is written once (at its first row), a heading joins its wrapped rows."""

    def __init__(self, markdown: bool, tables: list[OcrTable]) -> None:
        self.markdown = markdown
        self.tables = tables
        self.out: list[str] = []
        self.previous: OcrLine | None = None

    def add(self, line: OcrLine) -> None:
        previous = self.previous
        starts_block = previous is None or line.paragraph != previous.paragraph
        in_code = self.markdown and previous is not None and previous.kind == "code"
        continues_code = (
            in_code and previous is not None and line.kind == "code"
            and previous.column == line.column
        )  # fmt: skip
        if in_code and not continues_code:
            self.out.append("```")
        if starts_block and previous is not None:
            self.out.append("")
        if self.markdown:
            self._add_markdown(line, starts_block, continues_code)
        else:
            self.out.append(" " * line.indent + line.text)
        self.previous = line

    def _add_markdown(self, line: OcrLine, starts_block: bool, continues_code: bool) -> None:
        if line.kind == "table":
            previous = self.previous
            if starts_block or previous is None or previous.table != line.table:
                assert line.table is not None
                self.out.append(self.tables[line.table].markdown())
        elif line.kind == "code":
            if not continues_code:
                self.out.append("```")
            self.out.append(" " * line.indent + line.text)
        elif line.kind == "heading" and not starts_block:
            self.out[-1] += " " + line.text  # a Markdown heading is one line
        else:
            self.out.append(("## " if line.kind == "heading" else "") + line.text)

    def finish(self) -> list[str]:
        if self.markdown and self.previous is not None and self.previous.kind == "code":
            self.out.append("```")
        return self.out
