"""Writing OCR documents to files in an `OutputFormat` (formats.py says what each format is).

Every file is written whole or not at all (`desktop.core.atomic`) and read back as its format
before it is put in place: a full disk raises `WriteError` naming the file and leaves no
truncated output that looks like a result. A searchable PDF is written while its input is read
(searchable_pdf.py, through `produce.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from desktop.core import atomic
from desktop.core.ocr.formats import OutputFormat
from desktop.core.ocr.models import OcrDocument


def write_document(document: OcrDocument, target: Path, fmt: OutputFormat) -> list[Path]:
    """`target` (`<stem><suffix>`) in the format, plus `<stem>.table<N>.csv` beside it per table
    found (csv: those alone; a binary format: the file alone). Raises WriteError for the first
    file that cannot be written."""
    written = []
    if fmt.binary:
        write_file(target, fmt.render(document), fmt)
        return [target]
    if not fmt.tables_only:
        written.append(write_file(target, fmt.render(document), fmt))
    stem = target.name.removesuffix(fmt.suffix)
    for number, table in enumerate(document.tables, start=1):
        csv_path = target.with_name(f"{stem}.table{number}.csv")
        written.append(write_file(csv_path, table.csv().rstrip("\n"), OutputFormat.CSV))
    return written


def combined_problem(path: Path) -> str | None:
    """Why `path` cannot be a --combined file, or None."""
    fmt = OutputFormat.for_suffix(path.suffix)
    if fmt is not None and not fmt.combinable:
        names = ", ".join(f.suffix for f in OutputFormat if f.combinable)
        return f"--combined writes {names}; use --out DIR for a {fmt.suffix} per file"
    return None


def write_combined(documents: Sequence[OcrDocument], path: Path) -> Path:
    """All documents in one file; the format follows the extension (.txt, .md, .json, .xlsx;
    text for any other)."""
    if (problem := combined_problem(path)) is not None:
        raise ValueError(f"{problem}.")
    fmt = OutputFormat.for_path(path)
    write_file(path, fmt.combine(documents), fmt)
    return path


def write_file(path: Path, content: str | bytes, fmt: OutputFormat) -> Path:
    """One output file (text gets its final newline), read back as its format before it is
    put in place; a FIFO, /dev/stdout or a link is written through (`atomic.write_output`).
    Raises WriteError."""
    data = content if isinstance(content, bytes) else (content + "\n").encode("utf-8")
    return atomic.write_output(path, lambda file: file.write(data), fmt.check)
