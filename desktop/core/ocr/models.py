"""OCR results: fragments before layout, lines and tables after it, and their text renderings."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

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

    def markdown(self) -> str:
        """GitHub-flavoured Markdown table; the first row is the header."""
        cells = [[_markdown_cell(cell) for cell in row] for row in self.rows]
        lines = ["| " + " | ".join(row) + " |" for row in cells]
        lines.insert(1, "|" + "---|" * len(self.rows[0]))
        return "\n".join(lines)

    def csv(self) -> str:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(self.rows)
        return buffer.getvalue()


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

    def text(self) -> str:
        """Plain text: a blank line between paragraphs, code indentation kept."""
        return "\n".join(_paragraph_lines(self.lines, markdown=False)).strip("\n")

    def markdown(self) -> str:
        """Markdown: headings, fenced code blocks and tables where the layout shows them."""
        return "\n".join(_paragraph_lines(self.lines, markdown=True, tables=self.tables)).strip(
            "\n"
        )

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
                }
                for table in self.tables
            ],
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
    out: list[str] = []
    previous: OcrLine | None = None
    for line in lines:
        starts_block = previous is None or line.paragraph != previous.paragraph
        continues_code = (
            markdown
            and previous is not None
            and previous.kind == "code"
            and line.kind == "code"
            and previous.column == line.column
        )
        if markdown and previous is not None and previous.kind == "code" and not continues_code:
            out.append("```")
        if starts_block and previous is not None:
            out.append("")
        if not markdown:
            out.append(" " * line.indent + line.text)
        elif line.kind == "table":
            if starts_block or previous is None or previous.table != line.table:
                assert tables is not None and line.table is not None
                out.append(tables[line.table].markdown())
        elif line.kind == "code":
            if not continues_code:
                out.append("```")
            out.append(" " * line.indent + line.text)
        elif line.kind == "heading":  # a Markdown heading is one line: join wrapped rows
            if starts_block:
                out.append("## " + line.text)
            else:
                out[-1] += " " + line.text
        else:
            out.append(line.text)
        previous = line
    if markdown and previous is not None and previous.kind == "code":
        out.append("```")
    return out
