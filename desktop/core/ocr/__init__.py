"""Fast OCR: PP-OCR models (shipped in rapidocr's wheel) on OpenVINO, with layout.

    engine = OcrEngine()                  # cheap; models compile on warm_up() or first use
    result = engine.extract(image)        # LoadedImage | PIL.Image -> OcrResult
    result.text() / result.markdown() / result.to_json()
    grounding_text(result)                # OCR lines as grounding for the VLM

PDFs: `pdf.read_pdf`; many files or folders: `batch.run_batch`. INT8 models are built on first
use from NNCF's committed decisions (`int8.py`; `python -m devkit.ocr_calibrate` decides them
again). `service`: a warm engine answering `desklens ocr` from another process.

The names below load on first use, so that light submodules (`service`, `models`) can be
imported without OpenVINO, numpy and OpenCV: `desklens ocr` talking to a warm service
starts in a few tens of milliseconds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.ocr.engine import OcrEngine
    from desktop.core.ocr.grounding import grounding_text
    from desktop.core.ocr.model_files import OcrModelError
    from desktop.core.ocr.models import OcrDocument, OcrLine, OcrResult, OcrTable, TextFragment

_HOMES = {
    "OcrEngine": "engine",
    "grounding_text": "grounding",
    "OcrModelError": "model_files",
    "OcrDocument": "models",
    "OcrLine": "models",
    "OcrResult": "models",
    "OcrTable": "models",
    "TextFragment": "models",
}

__all__ = [
    "OcrDocument",
    "OcrEngine",
    "OcrLine",
    "OcrModelError",
    "OcrResult",
    "OcrTable",
    "TextFragment",
    "grounding_text",
]


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
