"""`POST /v1/ocr` (DeskLens's own): an image in, the fast OCR's text, Markdown or JSON out.

The body is the image itself (`Content-Type: image/png`, `?format=md`) or JSON
`{"image": "data:image/png;base64,..." | "<base64>", "format": "text" | "md" | "json"}`.
The text is rendered by the same function as `desklens ocr` prints with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.core.api.body import parse_body
from desktop.core.api.errors import ApiError, invalid
from desktop.core.api.messages import decode_data_url, decode_image
from desktop.core.images import LoadedImage

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine

FORMAT_NAMES = {"text": "text", "md": "md", "markdown": "md", "json": "json"}
IMAGE_NAME = "uploaded image"


@dataclass
class OcrCall:
    image: LoadedImage | None  # None once handed to the engine (take_image)
    format: str  # "text" | "md" | "json"

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
    image = data.get("image") if isinstance(data, dict) else None
    if not isinstance(image, str) or not image:
        raise invalid("'image' must be a data: URL or base64 image.", "image")
    fmt = _format(data.get("format", query_format))
    if image.lower().startswith(("data:", "http:", "https:", "file:")):
        return OcrCall(decode_data_url(image, IMAGE_NAME), fmt)
    return OcrCall(decode_image(image, IMAGE_NAME), fmt)


def read(engine: OcrEngine, call: OcrCall) -> OcrAnswer:
    """The OCR of the image rendered as `desklens ocr --format` prints it (blocking)."""
    from desktop.core.ocr.export import render
    from desktop.core.ocr.models import OcrDocument

    assert call.image is not None
    name = call.image.name
    result = engine.extract(call.take_image())
    document = OcrDocument(source_name=name, pages=[result])
    return OcrAnswer(call.format, render(document, call.format), len(result.lines), result.seconds)


def _format(name: object) -> str:
    if name is None:
        return "text"
    if not isinstance(name, str) or name.lower() not in FORMAT_NAMES:
        raise invalid("'format' must be text, md or json.", "format")
    return FORMAT_NAMES[name.lower()]
