"""One way from an input to an `OutputFormat`, for every front end: `desklens ocr` (printed,
sent to a redirected stdout, or written by the batch), the warm service and `POST /v1/ocr`.

    produced = produce(fmt, engine, source, target=None, cancel=..., on_page=...)

A document format (text, md, json, csv, xlsx) is rendered from what the OCR read; a source
format (pdf) is written from the input itself while it is read (`searchable_pdf`). Without a
target the output comes back (`Produced.content`: text, or a file's bytes); with one it is
written there, whole or not at all, and nothing is written when `cancel` cuts the reading short.
"""

from __future__ import annotations

import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.core.images import PDF_EXTENSION, LoadedImage, load_image
from desktop.core.ocr.export import write_document, write_file
from desktop.core.ocr.formats import Origin, OutputFormat
from desktop.core.ocr.models import OcrDocument
from desktop.core.ocr.pdf import PageCallback, read_pdf

if TYPE_CHECKING:
    from desktop.core.ocr.engine import OcrEngine


class HeldImage:
    """An image already in memory (an upload), handed over once: the engine frees its pixels
    as soon as it has copied them (400 MB for a 100 MP image), unless a searchable PDF still
    needs them."""

    def __init__(self, image: LoadedImage) -> None:
        self.name = image.name
        self._image: LoadedImage | None = image

    def take(self) -> LoadedImage:
        image, self._image = self._image, None
        if image is None:
            raise ValueError(f"{self.name} was handed over already.")
        return image

    def peek(self) -> LoadedImage:
        if self._image is None:
            raise ValueError(f"{self.name} was handed over already.")
        return self._image


Source = Path | HeldImage  # an image or PDF file, or an image in memory


@dataclass(frozen=True)
class Produced:
    document: OcrDocument  # what was read (cut short by `cancel`: the pages read until then)
    content: str | bytes | None = None  # without a target: the text, or the file's bytes
    outputs: tuple[Path, ...] = ()  # with a target: the files written
    written: bool = False  # with a target: every output is in place

    @property
    def text(self) -> str:
        """The content of a text format."""
        if not isinstance(self.content, str):
            raise ValueError("This format is a file, not text.")
        return self.content

    @property
    def data(self) -> bytes:
        """The content of a binary format."""
        if not isinstance(self.content, bytes):
            raise ValueError("This format is text, or its file was not made.")
        return self.content


def produce(
    fmt: OutputFormat,
    engine: OcrEngine,
    source: Source,
    target: Path | None = None,
    *,
    cancel: threading.Event | None = None,
    on_page: PageCallback | None = None,
) -> Produced:
    """Reads `source` and gives it in `fmt`; with `target` (`<stem><suffix>`), writes it there
    (a document format's tables also beside it: `export.write_document`). Raises ImageError
    (PdfError) for unusable input, OcrModelError, WriteError."""
    if fmt.origin is Origin.SOURCE:
        return _searchable(fmt, engine, source, target, cancel, on_page)
    document = read_document(engine, source, cancel, on_page)
    if target is None:
        return Produced(document, content=fmt.render(document))
    if cancel is not None and cancel.is_set():
        return Produced(document)  # perhaps cut short: nothing that looks like a result
    return Produced(document, outputs=tuple(write_document(document, target, fmt)), written=True)


def read_document(
    engine: OcrEngine,
    source: Source,
    cancel: threading.Event | None = None,
    on_page: PageCallback | None = None,
) -> OcrDocument:
    """One image or PDF as a document. Raises ImageError (PdfError) for unusable input."""
    if isinstance(source, HeldImage):
        return OcrDocument(source_name=source.name, pages=[engine.extract(source.take())])
    if source.suffix.lower() == PDF_EXTENSION:
        return read_pdf(engine, source, cancel=cancel, on_page=on_page)
    return OcrDocument(source_name=source.name, pages=[engine.extract(load_image(source))])


def _searchable(
    fmt: OutputFormat,
    engine: OcrEngine,
    source: Source,
    target: Path | None,
    cancel: threading.Event | None,
    on_page: PageCallback | None,
) -> Produced:
    """The searchable PDF: a file's is made as it is read (a long PDF page by page), an image
    in memory's from its pixels."""
    from desktop.core.ocr.searchable_pdf import image_pdf_bytes, write_searchable

    if isinstance(source, HeldImage):
        image = source.peek()
        document = OcrDocument(source_name=source.name, pages=[engine.extract(image)])
        page = image_pdf_bytes(image, document.pages[0])
        if target is None:
            return Produced(document, content=page)
        return Produced(document, outputs=(write_file(target, page, fmt),), written=True)
    if target is not None:
        made = write_searchable(engine, source, target, cancel=cancel, on_page=on_page)
        outputs = (target,) if made.written else ()
        return Produced(made.document, outputs=outputs, written=made.written)
    with tempfile.TemporaryDirectory(prefix="desklens-ocr-") as folder:
        out = Path(folder) / f"out{fmt.suffix}"
        made = write_searchable(engine, source, out, cancel=cancel, on_page=on_page)
        data = out.read_bytes() if made.written else None
    return Produced(made.document, content=data)
