"""Save extracted text as .txt, .md, .json, its tables as .xlsx or .csv, or the image as a
searchable PDF; the format follows the chosen extension. Copy the tables as TSV."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.core import atomic
from desktop.core.history.ocr_text import OcrText
from desktop.core.images import LoadedImage

# suffix -> the dialog's filter (labels as in desktop/core/ocr/export.py FORMATS)
FORMATS = {
    ".txt": "Plain text (*.txt)",
    ".md": "Markdown (*.md)",
    ".json": "JSON (*.json)",
    ".xlsx": "Excel workbook, a sheet per table (*.xlsx)",
    ".csv": "CSV, tables only (*.csv)",
    ".pdf": "Searchable PDF (*.pdf)",
}
TABLE_FORMATS = {suffix: FORMATS[suffix] for suffix in (".xlsx", ".csv")}
NO_TABLE = "No table was found in this image: save it as text, Markdown or a workbook instead."


def content_for(result: OcrText, suffix: str) -> str:
    if suffix == ".md":
        return result.markdown
    if suffix == ".json":
        return result.json
    return result.text


def file_content(result: OcrText, suffix: str, image: Callable[[], LoadedImage]) -> bytes:
    """The file for `suffix`; `image` loads the picture (a searchable PDF only). Call it off
    the GUI thread: a workbook or a PDF takes a moment. Raises ValueError (a sentence) for a
    CSV of an image without a table."""
    if suffix not in (".xlsx", ".csv", ".pdf"):
        return content_for(result, suffix).encode("utf-8")
    from desktop.core.ocr.models import OcrDocument
    from desktop.core.ocr.stored import result_from_dict

    page = result_from_dict(json.loads(result.json))
    if suffix == ".csv":
        from desktop.core.ocr.spreadsheet import csv_text

        if not page.tables:
            raise ValueError(NO_TABLE)
        return csv_text(page.tables).encode("utf-8")
    if suffix == ".xlsx":
        from desktop.core.ocr.spreadsheet import workbook_bytes

        return workbook_bytes([OcrDocument(result.source_name, [page])])
    from desktop.core.ocr.searchable_pdf import PageImage, image_pdf

    buffer = io.BytesIO()
    image_pdf(PageImage(image()), page, buffer)
    return buffer.getvalue()


def table_tsv(result: OcrText) -> str:
    """Every table as tab-separated rows (a blank line between two), for pasting into a
    spreadsheet; "" when there is none."""
    from desktop.core.ocr.spreadsheet import tsv_text
    from desktop.core.ocr.stored import result_from_dict

    tables = result_from_dict(json.loads(result.json)).tables
    return "\n".join(tsv_text(table.rows) for table in tables)


def default_file_name(result: OcrText, suffix: str = ".txt") -> str:
    stem = Path(result.source_name).stem or "extracted text"
    return re.sub(r'[<>:"/\\|?*\x00-\x1f]', "_", stem) + suffix


class SaveFolder:
    """The folder the user last saved into (extracted text, tables, an exported chat): every
    save dialog of this session opens there rather than in the working folder."""

    def __init__(self) -> None:
        self.folder: Path | None = None

    def start(self, name: str) -> str:
        return str(self.folder / name) if self.folder is not None else name

    def remember(self, path: Path) -> None:
        self.folder = path.parent


SAVE_FOLDER = SaveFolder()


def ask_save_path(
    parent: QWidget,
    result: OcrText,
    formats: dict[str, str] = FORMATS,
    title: str = "Save extracted text",
) -> Path | None:
    """Asks where to save (the extension picks the format); None if the user cancelled."""
    first = next(iter(formats))
    chosen_name, chosen = QFileDialog.getSaveFileName(
        parent, title, SAVE_FOLDER.start(default_file_name(result, first)),
        ";;".join(formats.values()),
    )  # fmt: skip
    if not chosen_name:
        return None
    path = Path(chosen_name)
    SAVE_FOLDER.remember(path)
    if path.suffix.lower() not in formats:  # no extension typed: take the filter's
        suffix = next((s for s, label in formats.items() if label == chosen), first)
        path = path.with_name(path.name + suffix)
    return path


def write_file(path: Path, content: bytes) -> None:
    """Writes the file (on the storage thread), whole or not at all. Raises OSError (a
    WriteError naming the file and the reason) when it cannot be written."""
    atomic.write_bytes(path, content)
