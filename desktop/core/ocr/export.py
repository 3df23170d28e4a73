"""Writing OCR documents to files: text, Markdown, JSON, and CSV for tables.

Every file is written whole or not at all (`desktop.core.atomic`): a full disk raises
`WriteError` naming the file and leaves no truncated output that looks like a result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from desktop.core import atomic
from desktop.core.ocr.models import OcrDocument

# format name (as the CLI spells it) -> file extension
FORMATS: dict[str, str] = {"text": ".txt", "md": ".md", "json": ".json"}


def render(document: OcrDocument, fmt: str) -> str:
    if fmt == "text":
        return document.text()
    if fmt == "md":
        return document.markdown()
    if fmt == "json":
        return document.to_json()
    raise ValueError(f"Unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}.")


def format_for_path(path: Path) -> str:
    """The format a file name asks for by its extension (text for anything unknown)."""
    by_extension = {extension: name for name, extension in FORMATS.items()}
    return by_extension.get(path.suffix.lower(), "text")


def write_document(document: OcrDocument, folder: Path, stem: str, fmt: str) -> list[Path]:
    """`<stem><ext>` in the chosen format, plus `<stem>.table<N>.csv` per table found.
    Raises WriteError for the first file that cannot be written."""
    main = folder / f"{stem}{FORMATS[fmt]}"
    _write(main, render(document, fmt))
    written = [main]
    for number, table in enumerate(document.tables, start=1):
        csv_path = folder / f"{stem}.table{number}.csv"
        _write(csv_path, table.csv())
        written.append(csv_path)
    return written


def write_combined(documents: Sequence[OcrDocument], path: Path) -> Path:
    """All documents in one file; the format follows the extension (.txt, .md or .json)."""
    fmt = format_for_path(path)
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
