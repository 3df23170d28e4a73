"""Fast OCR: PP-OCR models (shipped in rapidocr's wheel) on OpenVINO, with layout.

    engine = OcrEngine()                  # cheap; models compile on warm_up() or first use
    result = engine.extract(image)        # LoadedImage | PIL.Image -> OcrResult
    result.text() / result.markdown() / result.to_json()
    grounding_text(result)                # OCR lines as grounding for the VLM

PDFs: `pdf.read_pdf`; many files or folders: `batch.run_batch`. INT8 models are built on first
use from committed calibration ranges (`int8.py`; `python -m desktop.core.ocr.quantize`
recalibrates them).
"""

from desktop.core.ocr.engine import OcrEngine
from desktop.core.ocr.grounding import grounding_text
from desktop.core.ocr.model_files import OcrModelError
from desktop.core.ocr.models import OcrDocument, OcrLine, OcrResult, OcrTable, TextFragment

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
