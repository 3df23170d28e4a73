"""`POST /v1/ocr` (DeskLens's own): an image in, the fast OCR's text, Markdown, JSON or CSV
out as a JSON answer; or a file: an .xlsx workbook (a sheet per table) or a searchable PDF.

The body is the image itself (`Content-Type: image/png`, `?format=md`) or JSON
`{"image": "data:image/png;base64,..." | "<base64>", "format": "text" | "md" | "json" | "csv" |
"xlsx" | "pdf"}`. Text formats are rendered by the same function as `desklens ocr` prints with
and answered as JSON (`text`; csv: the tables, "" when none, with their count in `tables`);
xlsx and pdf are answered with the file's bytes, its media type and a file name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response

from desktop.core.api.body import parse_body
from desktop.core.api.errors import ApiError, invalid
from desktop.core.api.messages import decode_data_url, decode_image
from desktop.core.images import LoadedImage
from desktop.core.ocr.formats import OutputFormat

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine

IMAGE_NAME = "uploaded image"


@dataclass
class OcrCall:
    image: LoadedImage | None  # None once handed to the engine (take_image)
    format: OutputFormat

    def take_image(self) -> LoadedImage:
        """The image, no longer held here: the OCR engine frees its pixels once it has copied
        them (as for `desklens ocr FILE`), instead of the request keeping 400 MB alive."""
        image, self.image = self.image, None
        assert image is not None
        return image


@dataclass
class OcrAnswer:
    format: OutputFormat
    text: str
    lines: int
    seconds: float
    tables: int = 0
    data: bytes | None = None  # the file of a binary format (xlsx, pdf)

    def response(self, background: BackgroundTask | None = None) -> Response:
        """The file with its media type, or the JSON body; `background` runs once it is sent."""
        if self.data is None:
            return JSONResponse(self.body(), background=background)
        return Response(
            self.data,
            background=background,
            media_type=self.format.media_type,
            headers={
                "Content-Disposition": f'attachment; filename="ocr{self.format.suffix}"',
                "X-DeskLens-Lines": str(self.lines),
                "X-DeskLens-Tables": str(self.tables),
            },
        )

    def body(self) -> dict:
        data = {
            "object": "ocr",
            "model": "desklens-ocr",
            "format": self.format.value,
            "text": self.text,
            "lines": self.lines,
            "seconds": round(self.seconds, 4),
        }
        if self.format is OutputFormat.JSON:
            data["document"] = json.loads(self.text)
        if self.format.tables_only:
            data["tables"] = self.tables
        return data


def parse_ocr(content_type: str, body: bytes, query_format: str | None) -> OcrCall:
    """Validates an upload (raw image bytes or JSON); decodes the image. Raises ApiError."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind.startswith("image/"):
        return OcrCall(decode_image(body, IMAGE_NAME), _format(query_format))
    if kind not in ("application/json", ""):
        raise ApiError(
            415, "Send the image as image/* bytes or as JSON with an 'image' field.", "bad_type"
        )
    data = parse_body(body, len(body))  # bounded depth, text only (a 400 otherwise)
    if not isinstance(data, dict):
        raise invalid("'image' must be a data: URL or base64 image.", "image")
    image = data.get("image")
    if not isinstance(image, str) or not image:
        raise invalid("'image' must be a data: URL or base64 image.", "image")
    fmt = _format(data.get("format", query_format))
    if image.lower().startswith(("data:", "http:", "https:", "file:")):
        return OcrCall(decode_data_url(image, IMAGE_NAME), fmt)
    return OcrCall(decode_image(image, IMAGE_NAME), fmt)


def read(engine: OcrEngine, call: OcrCall) -> OcrAnswer:
    """The OCR of the image in the call's format, made by the same `produce` as `desklens ocr`
    (blocking)."""
    from desktop.core.ocr.produce import HeldImage, produce

    produced = produce(call.format, engine, HeldImage(call.take_image()))
    result = produced.document.pages[0]
    counts = (len(result.lines), result.seconds, len(result.tables))
    if isinstance(produced.content, bytes):
        return OcrAnswer(call.format, "", *counts, data=produced.content)
    return OcrAnswer(call.format, produced.text, *counts)


def _format(name: object) -> OutputFormat:
    if name is None:
        return OutputFormat.TEXT
    try:
        return OutputFormat.parse(name)
    except ValueError:
        raise invalid(f"'format' must be {OutputFormat.choices()}.", "format") from None
