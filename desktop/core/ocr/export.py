"""Writing OCR documents to files: the output formats in one table, and their writers.

text, md, json and csv are text (printed, served, sent by the API as JSON); xlsx is bytes made
from the document; pdf (a searchable PDF) is made from the input file itself while it is read
(searchable_pdf.py). Every file is written whole or not at all (`desktop.core.atomic`): a full
disk raises `WriteError` naming the file and leaves no truncated output that looks like a result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.core import atomic
from desktop.core.ocr.models import OcrDocument


@dataclass(frozen=True)
class OutputFormat:
    name: str  # as the CLI and the API spell it
    extension: str
    label: str  # a file dialog's filter
    media_type: str
    binary: bool = False  # bytes for a file, never printed on a terminal
    tables_only: bool = False  # only the tables (a page without one gives nothing)
    from_source: bool = False  # made from the input file as it is read, not from the text


_XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat("text", ".txt", "Plain text (*.txt)", "text/plain"),
        OutputFormat("md", ".md", "Markdown (*.md)", "text/markdown"),
        OutputFormat("json", ".json", "JSON (*.json)", "application/json"),
        OutputFormat("csv", ".csv", "CSV, tables only (*.csv)", "text/csv", tables_only=True),
        OutputFormat(
            "xlsx", ".xlsx", "Excel workbook, a sheet per table (*.xlsx)", _XLSX_TYPE, True
        ),
        OutputFormat(
            "pdf", ".pdf", "Searchable PDF (*.pdf)", "application/pdf", True, from_source=True
        ),
    )
}
FORMATS_BY_EXTENSION = {f.extension: f for f in FORMATS.values()}
COMBINED_FORMATS = ("text", "md", "json", "xlsx")  # what --combined FILE can be


def render(document: OcrDocument, fmt: str) -> str:
    """A text format's rendering; ValueError (a sentence) for an unknown or binary format."""
    if fmt == "text":
        return document.text()
    if fmt == "md":
        return document.markdown()
    if fmt == "json":
        return document.to_json()
    if fmt == "csv":
        from desktop.core.ocr.spreadsheet import csv_text

        return csv_text(document.tables)
    if fmt in FORMATS:
        raise ValueError(f"--format {fmt} is written to a file: give --out DIR.")
    raise ValueError(f"Unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}.")


def render_bytes(documents: Sequence[OcrDocument], fmt: str) -> bytes:
    """The file content of a format made from the text (all but pdf), UTF-8 for text."""
    if fmt == "xlsx":
        from desktop.core.ocr.spreadsheet import workbook_bytes  # openpyxl: only when asked

        return workbook_bytes(documents)
    return (render(documents[0], fmt) + "\n").encode("utf-8")


def format_for_path(path: Path) -> str:
    """The format a file name asks for by its extension (text for anything unknown)."""
    found = FORMATS_BY_EXTENSION.get(path.suffix.lower())
    return found.name if found is not None else "text"


def write_document(document: OcrDocument, folder: Path, stem: str, fmt: str) -> list[Path]:
    """`<stem><ext>` in the chosen format, plus `<stem>.table<N>.csv` per table found (csv:
    those alone; xlsx: the workbook alone). Raises WriteError for the first file that cannot
    be written. A searchable PDF is written while its input is read (batch.py)."""
    written = []
    if fmt == "xlsx":
        main = folder / f"{stem}.xlsx"
        atomic.write_bytes(main, render_bytes([document], fmt), mkdir=True)
        return [main]
    if not FORMATS[fmt].tables_only:
        main = folder / f"{stem}{FORMATS[fmt].extension}"
        _write(main, render(document, fmt))
        written.append(main)
    for number, table in enumerate(document.tables, start=1):
        csv_path = folder / f"{stem}.table{number}.csv"
        _write(csv_path, table.csv().rstrip("\n"))
        written.append(csv_path)
    return written


def combined_problem(path: Path) -> str | None:
    """Why `path` cannot be a --combined file, or None."""
    fmt = format_for_path(path)
    if path.suffix.lower() in FORMATS_BY_EXTENSION and fmt not in COMBINED_FORMATS:
        names = ", ".join(FORMATS[name].extension for name in COMBINED_FORMATS)
        return f"--combined writes {names}; use --out DIR for a {FORMATS[fmt].extension} per file"
    return None


def write_combined(documents: Sequence[OcrDocument], path: Path) -> Path:
    """All documents in one file; the format follows the extension (.txt, .md, .json, .xlsx)."""
    fmt = format_for_path(path)
    if fmt == "xlsx":
        atomic.write_bytes(path, render_bytes(documents, fmt), mkdir=True)
        return path
    if fmt == "json":
        content = json.dumps([d.to_dict() for d in documents], ensure_ascii=False, indent=2)
    elif fmt == "md":
        content = "\n\n".join(f"# {d.source_name}\n\n{d.markdown()}" for d in documents)
    else:
        content = "\n\n".join(f"===== {d.source_name} =====\n{d.text()}" for d in documents)
    _write(path, content)
    return path


def _write(path: Path, content: str) -> None:
    atomic.write_text(path, content + "\n", mkdir=True)
