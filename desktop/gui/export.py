"""Save extracted text as .txt, .md or .json; the format follows the chosen extension."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.core import atomic
from desktop.core.history.ocr_text import OcrText

FORMATS = {".txt": "Plain text (*.txt)", ".md": "Markdown (*.md)", ".json": "JSON (*.json)"}


def content_for(result: OcrText, suffix: str) -> str:
    if suffix == ".md":
        return result.markdown
    if suffix == ".json":
        return result.json
    return result.text


def default_file_name(result: OcrText, suffix: str = ".txt") -> str:
    stem = Path(result.source_name).stem or "extracted text"
    return re.sub(r'[<>:"/\\|?*\x00-\x1f]', "_", stem) + suffix


def ask_save_path(parent: QWidget, result: OcrText, folder: str = "") -> tuple[Path, str] | None:
    """Asks where to save; returns the file and the content its format calls for, or None
    if the user cancelled."""
    start = str(Path(folder) / default_file_name(result)) if folder else default_file_name(result)
    name, chosen = QFileDialog.getSaveFileName(
        parent, "Save extracted text", start, ";;".join(FORMATS.values())
    )
    if not name:
        return None
    path = Path(name)
    if path.suffix.lower() not in FORMATS:  # no extension typed: take the filter's
        suffix = next((s for s, label in FORMATS.items() if label == chosen), ".txt")
        path = path.with_name(path.name + suffix)
    return path, content_for(result, path.suffix.lower())


def write_text(path: Path, content: str) -> None:
    """Writes the file (on the storage thread), whole or not at all. Raises OSError (a
    WriteError naming the file and the reason) when it cannot be written."""
    atomic.write_text(path, content)
