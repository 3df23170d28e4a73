"""Save extracted text as .txt, .md, .json, its tables as .xlsx or .csv, or the image as a
searchable PDF; the format follows the chosen extension. Copy the tables as TSV."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.core import atomic
from desktop.core.history.ocr_text import OcrText
from desktop.core.images import LoadedImage
from desktop.core.ocr.formats import Origin, OutputFormat

FORMATS = tuple(OutputFormat)  # Save as…: every format, plain text first (the default)
TABLE_FORMATS = (OutputFormat.XLSX, OutputFormat.CSV)  # Save table as…: the workbook first
NO_TABLE = "No table was found in this image: save it as text, Markdown or a workbook instead."


def file_content(result: OcrText, fmt: OutputFormat, image: Callable[[], LoadedImage]) -> bytes:
    """The file in `fmt`; `image` loads the picture (a searchable PDF only). Text, Markdown
    and JSON are the extraction's own, as shown; the rest is made from its stored result. Call
    it off the GUI thread: a workbook or a PDF takes a moment. Raises ValueError (a sentence)
    for a CSV of an image without a table."""
    shown = {OutputFormat.TEXT: result.text, OutputFormat.MD: result.markdown,
             OutputFormat.JSON: result.json}.get(fmt)  # fmt: skip
    if shown is not None:
        return shown.encode("utf-8")
    from desktop.core.ocr.models import OcrDocument
    from desktop.core.ocr.stored import result_from_dict

    page = result_from_dict(json.loads(result.json))
    if fmt.origin is Origin.SOURCE:
        from desktop.core.ocr.searchable_pdf import image_pdf_bytes

        return image_pdf_bytes(image(), page)
    if fmt.tables_only and not page.tables:
        raise ValueError(NO_TABLE)
    content = fmt.render(OcrDocument(result.source_name, [page]))
    return content if isinstance(content, bytes) else content.encode("utf-8")


def table_tsv(result: OcrText) -> str:
    """Every table as tab-separated rows (a blank line between two), for pasting into a
    spreadsheet; "" when there is none."""
    from desktop.core.ocr.spreadsheet import tsv_text
    from desktop.core.ocr.stored import result_from_dict

    tables = result_from_dict(json.loads(result.json)).tables
    return "\n".join(tsv_text(table.rows) for table in tables)


def default_file_name(result: OcrText, fmt: OutputFormat = OutputFormat.TEXT) -> str:
    stem = Path(result.source_name).stem or "extracted text"
    return re.sub(r'[<>:"/\\|?*\x00-\x1f]', "_", stem) + fmt.suffix


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
    formats: Sequence[OutputFormat] = FORMATS,
    title: str = "Save extracted text",
) -> tuple[Path, OutputFormat] | None:
    """Asks where to save; the extension picks the format (none typed: the chosen filter's).
    None if the user cancelled."""
    first = formats[0]
    chosen_name, chosen = QFileDialog.getSaveFileName(
        parent, title, SAVE_FOLDER.start(default_file_name(result, first)),
        ";;".join(fmt.label for fmt in formats),
    )  # fmt: skip
    if not chosen_name:
        return None
    path = Path(chosen_name)
    SAVE_FOLDER.remember(path)
    typed = OutputFormat.for_suffix(path.suffix)
    if typed is not None and typed in formats:
        return path, typed
    fmt = next((f for f in formats if f.label == chosen), first)
    return path.with_name(path.name + fmt.suffix), fmt


def write_file(path: Path, content: bytes) -> None:
    """Writes the file (on the storage thread), whole or not at all. Raises OSError (a
    WriteError naming the file and the reason) when it cannot be written."""
    atomic.write_bytes(path, content)
