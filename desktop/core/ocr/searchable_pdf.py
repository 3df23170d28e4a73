"""Searchable PDFs: an image, a scan or a PDF without a text layer in; a PDF that looks the
same out, with the recognised text invisible on top, selectable and searchable.

An image becomes one page of its own size (its DPI, or 96 for a screenshot), the image
embedded losslessly (a JPEG as it is, anything else Flate-compressed pixels). A PDF is not
rewritten: the text layers are added as an incremental update after its original bytes (pypdf),
so every page looks exactly as before; pages that already have a text layer are passed through
untouched and are not OCR'd again. Pages are rendered and read one at a time: memory is one
page's rendering plus the file itself, whatever the page count.
"""

from __future__ import annotations

import ctypes
import io
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image
from pypdf import PdfWriter
from pypdf.errors import PyPdfError
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    IndirectObject,
    NameObject,
    NumberObject,
)

from desktop.core import atomic
from desktop.core.images import PDF_EXTENSION, LoadedImage, load_image
from desktop.core.ocr import text_layer
from desktop.core.ocr.formats import check_pdf
from desktop.core.ocr.models import OcrDocument, OcrResult
from desktop.core.ocr.pdf import PageCallback, PdfError, open_pdf, page_scale, read_page
from desktop.core.ocr.pdf_objects import glyphless_font, plain_stream

if TYPE_CHECKING:
    from desktop.core.ocr.engine import OcrEngine

MEDIA_TYPE = "application/pdf"
SCREEN_DPI = 96.0  # an image without a DPI of its own: a screenshot, 1 px = 0.75 pt
Matrix = tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class PageImage:
    """An image to put on a page: the pixels the OCR read, and the bytes to embed."""

    image: LoadedImage
    jpeg: bytes | None = None  # the file itself when it is a JPEG shown as stored
    dpi: float = SCREEN_DPI
    gray: bool = False  # the JPEG has one channel


@dataclass(frozen=True)
class Searchable:
    """What `write_searchable` read, and whether its PDF was written (False: cut short)."""

    document: OcrDocument
    written: bool


def write_searchable(
    engine: OcrEngine,
    path: Path,
    out: Path,
    *,
    cancel: threading.Event | None = None,
    on_page: PageCallback | None = None,
) -> Searchable:
    """Reads `path` (an image or a PDF) and writes its searchable PDF to `out`, whole or not at
    all (not when `cancel` cuts it short). Raises ImageError (PdfError), WriteError."""
    if path.suffix.lower() == PDF_EXTENSION:
        return _pdf_to_searchable(engine, path, out, cancel, on_page)
    page = page_image(path)
    result = engine.extract(page.image)
    _save(out, lambda file: image_pdf(page, result, file))
    return Searchable(OcrDocument(source_name=path.name, pages=[result]), written=True)


def page_image(path: Path) -> PageImage:
    """The image as the OCR sees it (EXIF orientation applied), its DPI, and its JPEG bytes
    when they can be embedded as they are."""
    loaded = load_image(path)
    with Image.open(path) as original:
        dpi = _dpi(original.info.get("dpi"))
        upright = original.getexif().get(0x0112, 1) == 1  # EXIF orientation
        plain = original.format == "JPEG" and original.mode in ("RGB", "L") and upright
        gray = original.mode == "L"
    return PageImage(loaded, path.read_bytes() if plain else None, dpi, plain and gray)


def image_pdf_bytes(image: LoadedImage, result: OcrResult) -> bytes:
    """The one-page PDF of an image already in memory (an upload, a saved extraction's)."""
    buffer = io.BytesIO()
    image_pdf(PageImage(image), result, buffer)
    return buffer.getvalue()


def image_pdf(page: PageImage, result: OcrResult, file: IO[bytes]) -> None:
    """One page: the image, and the result's text invisible on its boxes."""
    writer = PdfWriter()
    add_image_page(writer, page, result)
    writer.write(file)


def add_image_page(
    writer: PdfWriter, page: PageImage, result: OcrResult, font: IndirectObject | None = None
) -> IndirectObject:
    """Appends a page of the image's size (at its DPI) with the result's text invisible on its
    boxes; returns the text's font, for the writer's next pages to share."""
    font = font or glyphless_font(writer)
    width, height = page.image.size
    points = 72.0 / page.dpi
    pdf_page = writer.add_blank_page(width * points, height * points)
    image = _image_stream(page)
    size = _numbers(width * points, 0, 0, height * points, 0, 0)
    draw = f"q {size} cm /Im0 Do Q\n"
    to_page: Matrix = (points, 0.0, 0.0, -points, 0.0, height * points)
    stream = plain_stream(draw.encode() + _overlay(result, to_page, page.image.image))
    pdf_page[NameObject("/Contents")] = writer._add_object(stream.flate_encode())
    pdf_page[NameObject("/Resources")] = DictionaryObject(
        {
            NameObject("/XObject"): DictionaryObject(
                {NameObject("/Im0"): writer._add_object(image)}
            ),
            NameObject("/Font"): DictionaryObject({NameObject(text_layer.RESOURCE_NAME): font}),
        }
    )
    return font


def _pdf_to_searchable(
    engine: OcrEngine,
    path: Path,
    out: Path,
    cancel: threading.Event | None,
    on_page: PageCallback | None,
) -> Searchable:
    name = path.name
    pages: list[OcrResult] = []
    font: IndirectObject | None = None
    with open_pdf(path, name) as document:  # a missing or unreadable file: its own sentence
        writer = _updatable(path, name)
        total = len(document)
        for index in range(total):
            if cancel is not None and cancel.is_set():
                return Searchable(OcrDocument(source_name=name, pages=pages), written=False)
            page = document[index]
            try:
                result = read_page(engine, page, name, index + 1)
                overlay = None
                if not result.text_layer and result.lines:
                    overlay = _page_overlay(page, result, name, index + 1)
            finally:
                page.close()
            pages.append(result)
            if overlay is not None:
                font = font or glyphless_font(writer)
                _add_overlay(writer, index, overlay, font)
            if on_page is not None:
                on_page(index + 1, total)
    if font is None:  # no page got a text layer: the file is its own searchable PDF
        _save(out, lambda file: _copy(path, file))
    else:
        _save(out, lambda file: _write_update(writer, path, file))
    return Searchable(OcrDocument(source_name=name, pages=pages), written=True)


def _copy(source: Path, file: IO[bytes]) -> None:
    with source.open("rb") as original:
        shutil.copyfileobj(original, file)


def _write_update(writer: PdfWriter, source: Path, file: IO[bytes]) -> None:
    """The original file's bytes, then the objects added or changed and a classic xref table
    for them (an incremental update any PDF 1.x reader follows; pypdf's own writes an xref
    stream, a PDF 1.5 feature, that leaves itself out of /Size)."""
    with source.open("rb") as original:
        shutil.copyfileobj(original, file)
    file.write(b"\n")
    positions: dict[int, int] = {}
    originals = writer._original_hash
    for index, obj in enumerate(writer._objects):
        if obj is None or (index < len(originals) and obj.hash_bin() == originals[index]):
            continue
        positions[index + 1] = file.tell()
        file.write(f"{index + 1} 0 obj\n".encode())
        obj.write_to_stream(file)
        file.write(b"\nendobj\n")
    xref = file.tell()
    file.write(b"xref\n")
    for first, run in _runs(sorted(positions)):
        file.write(f"{first} {len(run)}\n".encode())
        file.write(b"".join(b"%010d 00000 n \n" % positions[number] for number in run))
    assert writer._reader is not None
    previous = writer._reader.trailer
    trailer = DictionaryObject(
        {
            NameObject("/Size"): NumberObject(len(writer._objects) + 1),
            NameObject("/Root"): writer.root_object.indirect_reference,
            NameObject("/Prev"): NumberObject(writer._reader._startxref),
        }
    )
    for key in ("/Info", "/ID"):
        if key in previous:
            trailer[NameObject(key)] = previous.raw_get(key)
    file.write(b"trailer\n")
    trailer.write_to_stream(file)
    file.write(f"\nstartxref\n{xref}\n%%EOF\n".encode())


def _runs(numbers: list[int]) -> list[tuple[int, list[int]]]:
    """Consecutive object numbers grouped: the xref table's subsections."""
    runs: list[tuple[int, list[int]]] = []
    for number in numbers:
        if runs and runs[-1][1][-1] == number - 1:
            runs[-1][1].append(number)
        else:
            runs.append((number, [number]))
    return runs


def _updatable(path: Path, name: str) -> PdfWriter:
    """The PDF opened for an incremental update; PdfError when it cannot take one."""
    try:
        writer = PdfWriter(path, incremental=True)
        encrypted = writer._reader is not None and writer._reader.is_encrypted
        pages = len(writer.pages)
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise PdfError(f'"{name}" could not be opened as a PDF: it is damaged.') from exc
    if encrypted:
        raise PdfError(
            f'"{name}" is encrypted: DeskLens cannot add a text layer to it (its text can be '
            "read with --format text)."
        )
    if pages == 0:
        raise PdfError(f'"{name}" has no pages.')
    return writer


def _add_overlay(writer: PdfWriter, index: int, overlay: bytes, font: IndirectObject) -> None:
    """The page's content wrapped in q/Q (whatever state it leaves, the text starts from the
    page's own space), then the text; the font added to a copy of its resources."""
    page = writer.pages[index]
    contents = page.get("/Contents")
    original = contents.get_object() if contents is not None else None
    if isinstance(original, ArrayObject):
        parts = list(original)
    else:
        parts = [contents] if contents is not None else []
    save = writer._add_object(plain_stream(b"q\n"))
    text = writer._add_object(plain_stream(b"\nQ\n" + overlay).flate_encode())
    page[NameObject("/Contents")] = ArrayObject([save, *parts, text])
    resources = page.get("/Resources")
    resources = DictionaryObject(resources.get_object() if resources is not None else {})
    fonts = resources.get("/Font")
    fonts = DictionaryObject(fonts.get_object() if fonts is not None else {})
    fonts[NameObject(text_layer.RESOURCE_NAME)] = font
    resources[NameObject("/Font")] = fonts
    page[NameObject("/Resources")] = resources


def _page_overlay(page: pdfium.PdfPage, result: OcrResult, name: str, number: int) -> bytes:
    """The text layer of a scanned page; a page with a ruled table is rendered once more (as
    the OCR saw it) to place the cells' text on their ink."""
    to_page = _pixels_to_page(page, result.width, result.height)
    image = None
    if any(table.ruled for table in result.tables):
        image = page.render(scale=page_scale(page, name, number)).to_pil().convert("RGB")
    return _overlay(result, to_page, image)


def _overlay(result: OcrResult, to_page: Matrix, image: Image.Image | None) -> bytes:
    matrix = _numbers(*to_page)
    return f"q {matrix} cm\n".encode() + text_layer.content(result, image) + b"Q\n"


def _pixels_to_page(page: pdfium.PdfPage, width: int, height: int) -> Matrix:
    """The affine map from the rendered page's pixels (as the OCR saw them) to the page's
    user space, as PDFium rendered it (rotation and crop box included)."""

    def point(x: int, y: int) -> tuple[float, float]:
        page_x, page_y = ctypes.c_double(), ctypes.c_double()
        pdfium_c.FPDF_DeviceToPage(
            page.raw, 0, 0, width, height, 0, x, y, ctypes.byref(page_x), ctypes.byref(page_y)
        )
        return page_x.value, page_y.value

    (x0, y0), (x1, y1), (x2, y2) = point(0, 0), point(width, 0), point(0, height)
    return ((x1 - x0) / width, (y1 - y0) / width, (x2 - x0) / height, (y2 - y0) / height, x0, y0)


def _image_stream(page: PageImage) -> DecodedStreamObject:
    image = page.image.image
    stream = DecodedStreamObject()
    stream.update(
        {
            NameObject("/Type"): NameObject("/XObject"),
            NameObject("/Subtype"): NameObject("/Image"),
            NameObject("/Width"): NumberObject(image.width),
            NameObject("/Height"): NumberObject(image.height),
            NameObject("/BitsPerComponent"): NumberObject(8),
        }
    )
    stream[NameObject("/ColorSpace")] = NameObject("/DeviceGray" if page.gray else "/DeviceRGB")
    if page.jpeg is not None:
        stream[NameObject("/Filter")] = NameObject("/DCTDecode")
        stream.set_data(page.jpeg)
        return stream
    stream.set_data(image.convert("RGB").tobytes())
    return stream.flate_encode()  # type: ignore[return-value]


def _dpi(value: object) -> float:
    """The image's horizontal DPI when it has a plausible one."""
    if isinstance(value, tuple) and value:
        try:
            dpi = float(value[0])
        except (TypeError, ValueError):
            return SCREEN_DPI
        if 30 <= dpi <= 2400:
            return dpi
    return SCREEN_DPI


def _save(out: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Read back as a PDF before it is put in place; a FIFO or /dev/stdout written through."""
    atomic.write_output(out, write, check_pdf)


def _numbers(*values: float) -> str:
    return " ".join(text_layer.pdf_number(value) for value in values)
