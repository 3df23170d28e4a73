"""`POST /v1/ocr` (DeskLens's own): an image in, the fast OCR's text, Markdown, JSON or CSV
out as a JSON answer; or a file: an .xlsx workbook (a sheet per table) or a searchable PDF.

The body is the image itself (`Content-Type: image/png`, `?format=md`) or JSON
`{"image": "data:image/png;base64,..." | "<base64>", "format": "text" | "md" | "json" | "csv" |
"xlsx" | "pdf"}`. Text formats are rendered by the same function as `desklens ocr` prints with
and answered as JSON (`text`; csv: the tables, "" when none, with their count in `tables`);
xlsx and pdf are answered with the file's bytes, its media type and a file name.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response

from desktop.core.api.body import parse_body
from desktop.core.api.errors import ApiError, invalid
from desktop.core.api.messages import decode_data_url, decode_image
from desktop.core.images import LoadedImage

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine, OcrResult

FORMAT_NAMES = {
    "text": "text",
    "md": "md",
    "markdown": "md",
    "json": "json",
    "csv": "csv",
    "xlsx": "xlsx",
    "pdf": "pdf",
}
IMAGE_NAME = "uploaded image"


@dataclass
class OcrCall:
    image: LoadedImage | None  # None once handed to the engine (take_image)
    format: str  # a name in FORMAT_NAMES' values

    def take_image(self) -> LoadedImage:
        """The image, no longer held here: the OCR engine frees its pixels once it has copied
        them (as for `desklens ocr FILE`), instead of the request keeping 400 MB alive."""
        image, self.image = self.image, None
        assert image is not None
        return image


@dataclass
class OcrAnswer:
    format: str
    text: str
    lines: int
    seconds: float
    tables: int = 0
    data: bytes | None = None  # the file of a binary format (xlsx, pdf)

    def response(self, background: BackgroundTask | None = None) -> Response:
        """The file with its media type, or the JSON body; `background` runs once it is sent."""
        if self.data is None:
            return JSONResponse(self.body(), background=background)
        from desktop.core.ocr.export import FORMATS

        output = FORMATS[self.format]
        return Response(
            self.data,
            background=background,
            media_type=output.media_type,
            headers={
                "Content-Disposition": f'attachment; filename="ocr{output.extension}"',
                "X-DeskLens-Lines": str(self.lines),
                "X-DeskLens-Tables": str(self.tables),
            },
        )

    def body(self) -> dict:
        data = {
            "object": "ocr",
            "model": "desklens-ocr",
            "format": self.format,
            "text": self.text,
            "lines": self.lines,
            "seconds": round(self.seconds, 4),
        }
        if self.format == "json":
            data["document"] = json.loads(self.text)
        if self.format == "csv":
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
    """The OCR of the image rendered as `desklens ocr --format` prints it (blocking)."""
    from desktop.core.ocr.export import FORMATS, render, render_bytes
    from desktop.core.ocr.models import OcrDocument

    assert call.image is not None
    name = call.image.name
    if call.format == "pdf":  # the page image goes into the PDF: it stays held until then
        image = call.image
        result = engine.extract(image)
        data = _searchable(image, result)
        return OcrAnswer(call.format, "", *_counts(result), data=data)
    result = engine.extract(call.take_image())
    document = OcrDocument(source_name=name, pages=[result])
    if FORMATS[call.format].binary:
        data = render_bytes([document], call.format)
        return OcrAnswer(call.format, "", *_counts(result), data=data)
    return OcrAnswer(call.format, render(document, call.format), *_counts(result))


def _counts(result: OcrResult) -> tuple[int, float, int]:
    """OcrAnswer's lines, seconds and tables."""
    return len(result.lines), result.seconds, len(result.tables)


def _searchable(image: LoadedImage, result: OcrResult) -> bytes:
    from desktop.core.ocr.searchable_pdf import PageImage, image_pdf

    buffer = io.BytesIO()
    image_pdf(PageImage(image), result, buffer)
    return buffer.getvalue()


def _format(name: object) -> str:
    if name is None:
        return "text"
    if not isinstance(name, str) or name.lower() not in FORMAT_NAMES:
        raise invalid("'format' must be text, md, json, csv, xlsx or pdf.", "format")
    return FORMAT_NAMES[name.lower()]
