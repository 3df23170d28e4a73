"""Writing OCR documents to files: the output formats in one table, and their writers.

text, md, json and csv are text (printed, served, sent by the API as JSON); xlsx is bytes made
from the document; pdf (a searchable PDF) is made from the input file itself while it is read
(searchable_pdf.py). Every file is written whole or not at all (`desktop.core.atomic`): a full
disk raises `WriteError` naming the file and leaves no truncated output that looks like a result.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from desktop.core import atomic
from desktop.core.ocr.models import OcrDocument


@dataclass(frozen=True)
class OutputFormat:
    """One output format: adding a format is adding one of these to FORMATS (the CLI's
    --format, the batch, the API and the app's Save as read the table)."""

    name: str  # as the CLI and the API spell it
    extension: str
    label: str  # a file dialog's filter
    media_type: str
    binary: bool = False  # bytes for a file, never printed on a terminal
    tables_only: bool = False  # only the tables (a page without one gives nothing)
    from_source: bool = False  # made from the input file as it is read, not from the text
    text: Callable[[OcrDocument], str] | None = None  # a text format's rendering
    data: Callable[[Sequence[OcrDocument]], bytes] | None = None  # a file made from documents
    # --combined FILE: every document in one file of this format (None: not offered)
    combined: Callable[[Sequence[OcrDocument]], str | bytes] | None = None
    # reads a written file back (raising when it is not whole) before it is put in place
    check: Callable[[IO[bytes]], object] | None = None


def _csv(document: OcrDocument) -> str:
    from desktop.core.ocr.spreadsheet import csv_text

    return csv_text(document.tables)


def _xlsx(documents: Sequence[OcrDocument]) -> bytes:
    from desktop.core.ocr.spreadsheet import workbook_bytes  # openpyxl: only when asked

    return workbook_bytes(documents)


def _combined_text(documents: Sequence[OcrDocument]) -> str:
    return "\n\n".join(f"===== {d.source_name} =====\n{d.text()}" for d in documents)


def _combined_markdown(documents: Sequence[OcrDocument]) -> str:
    return "\n\n".join(f"# {d.source_name}\n\n{d.markdown()}" for d in documents)


def _combined_json(documents: Sequence[OcrDocument]) -> str:
    return json.dumps([d.to_dict() for d in documents], ensure_ascii=False, indent=2)


def check_utf8(file: IO[bytes]) -> str:
    return file.read().decode("utf-8")


def check_json(file: IO[bytes]) -> object:
    return json.loads(check_utf8(file))


def check_csv(file: IO[bytes]) -> object:
    return list(csv.reader(io.StringIO(check_utf8(file), newline="")))


def check_xlsx(file: IO[bytes]) -> object:
    from openpyxl import load_workbook

    workbook = load_workbook(file, read_only=True)
    try:
        return [list(sheet.iter_rows(values_only=True)) for sheet in workbook.worksheets]
    finally:
        workbook.close()


def check_pdf(file: IO[bytes]) -> int:
    from pypdf import PdfReader

    pages = len(PdfReader(file, strict=True).pages)
    if not pages:
        raise ValueError("no pages")
    return pages


_XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
FORMATS: dict[str, OutputFormat] = {
    f.name: f
    for f in (
        OutputFormat("text", ".txt", "Plain text (*.txt)", "text/plain",
                     text=OcrDocument.text, combined=_combined_text, check=check_utf8),
        OutputFormat("md", ".md", "Markdown (*.md)", "text/markdown",
                     text=OcrDocument.markdown, combined=_combined_markdown, check=check_utf8),
        OutputFormat("json", ".json", "JSON (*.json)", "application/json",
                     text=OcrDocument.to_json, combined=_combined_json, check=check_json),
        OutputFormat("csv", ".csv", "CSV, tables only (*.csv)", "text/csv", tables_only=True,
                     text=_csv, check=check_csv),
        OutputFormat("xlsx", ".xlsx", "Excel workbook, a sheet per table (*.xlsx)", _XLSX_TYPE,
                     binary=True, data=_xlsx, combined=_xlsx, check=check_xlsx),
        OutputFormat("pdf", ".pdf", "Searchable PDF (*.pdf)", "application/pdf", binary=True,
                     from_source=True, check=check_pdf),  # searchable_pdf.py, as it is read
    )
}  # fmt: skip
FORMATS_BY_EXTENSION = {f.extension: f for f in FORMATS.values()}
COMBINED_FORMATS = tuple(name for name, f in FORMATS.items() if f.combined is not None)


def render(document: OcrDocument, fmt: str) -> str:
    """A text format's rendering; ValueError (a sentence) for an unknown or binary format."""
    found = FORMATS.get(fmt)
    if found is None:
        raise ValueError(f"Unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    if found.text is None:
        raise ValueError(f"--format {fmt} is written to a file: give --out DIR.")
    return found.text(document)


def render_bytes(documents: Sequence[OcrDocument], fmt: str) -> bytes:
    """The file content of a format made from the text (all but pdf), UTF-8 for text."""
    make = FORMATS[fmt].data
    if make is not None:
        return make(documents)
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
    if FORMATS[fmt].data is not None:
        main = folder / f"{stem}{FORMATS[fmt].extension}"
        write_file(main, render_bytes([document], fmt), fmt)
        return [main]
    if not FORMATS[fmt].tables_only:
        main = folder / f"{stem}{FORMATS[fmt].extension}"
        write_file(main, render(document, fmt), fmt)
        written.append(main)
    for number, table in enumerate(document.tables, start=1):
        csv_path = folder / f"{stem}.table{number}.csv"
        write_file(csv_path, table.csv().rstrip("\n"), "csv")
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
    combine = FORMATS[format_for_path(path)].combined
    if combine is None:
        raise ValueError(f"{combined_problem(path)}.")
    write_file(path, combine(documents), format_for_path(path))
    return path


def write_file(path: Path, content: str | bytes, fmt: str) -> Path:
    """One output file (text gets its final newline), read back as its format before it is
    put in place; a FIFO, /dev/stdout or a link is written through (`atomic.write_output`).
    Raises WriteError."""
    data = content if isinstance(content, bytes) else (content + "\n").encode("utf-8")
    return atomic.write_output(path, lambda file: file.write(data), FORMATS[fmt].check)
