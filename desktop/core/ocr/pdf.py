"""PDF text: pages with an embedded text layer are read from it, the others are rendered and OCR'd.

Either way the text goes through the same layout, so two-column pages and tables come out in
the same reading order. Coordinates are pixels of the page rendered at its scale: RENDER_SCALE,
or less for a page so large that its rendering would pass MAX_RENDER_PIXELS (decided from the
page's size in points, before any pixel is allocated). Rendering alone (the GUI's intake)
imports neither OpenCV nor OpenVINO: the OCR engine is only passed in.
"""

from __future__ import annotations

import math
import os
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pypdfium2 as pdfium
from PIL import Image

from desktop.core.images import ImageError, file_problem, load_image
from desktop.core.ocr.models import OcrDocument, OcrResult, TextFragment

if TYPE_CHECKING:
    from desktop.core.ocr.engine import OcrEngine

# 144 dpi: 10-point text becomes 20 px tall, the size the OCR models read best; an A4 page
# renders to 1190 x 1684 pixels.
RENDER_SCALE = 2.0
# A page whose text layer has fewer visible characters than this is treated as a scan (a
# page number or a stamp alone must not hide the page's real, image-only content).
MIN_TEXT_LAYER_CHARS = 20
MAX_GARBLED_SHARE = 0.3
# 36 megapixels: an A4 page at 600 dpi. A larger page (a poster, a 200-inch-square page) is
# rendered at the scale that fits: a 14400 x 14400 pt page at RENDER_SCALE would be 829 MP,
# 3.3 GB as BGRA before it could be refused.
MAX_RENDER_PIXELS = 36_000_000
# Below this (18 dpi) nothing but a poster's headline is readable: such a page is refused.
MIN_RENDER_SCALE = 0.25

PageCallback = Callable[[int, int], None]  # (pages done, pages in total)


class PdfError(ImageError):
    """The PDF could not be opened or read; str(e) is a user-facing sentence naming the file."""


def read_pdf(
    engine: OcrEngine,
    path: str | os.PathLike,
    *,
    on_page: PageCallback | None = None,
    cancel: threading.Event | None = None,
) -> OcrDocument:
    """Every page's text, in order. Stops early (fewer pages) when `cancel` is set."""
    name = Path(path).name
    pages: list[OcrResult] = []
    with open_pdf(path, name) as document:
        total = len(document)
        for index in range(total):
            if cancel is not None and cancel.is_set():
                break
            page = document[index]
            try:
                pages.append(read_page(engine, page, name, index + 1))
            finally:
                page.close()
            if on_page is not None:
                on_page(index + 1, total)
    return OcrDocument(source_name=name, pages=pages)


def render_pages(
    path: str | os.PathLike, limit: int | None = None
) -> tuple[list[Image.Image], int]:
    """The first `limit` pages as RGB images at their scale, and the page count."""
    name = Path(path).name
    with open_pdf(path, name) as document:
        total = len(document)
        images = []
        for index in range(total if limit is None else min(total, limit)):
            page = document[index]
            try:
                images.append(render_at(page, page_scale(page, name, index + 1)))
            finally:
                page.close()
        return images, total


def page_scale(page: pdfium.PdfPage, name: str, number: int) -> float:
    """RENDER_SCALE, or the smaller scale at which the page fits MAX_RENDER_PIXELS; PdfError
    for a page with no area or one too large to read even at MIN_RENDER_SCALE."""
    width, height = page.get_size()
    area = width * height
    if not (math.isfinite(area) and width > 0 and height > 0):
        raise PdfError(f'Page {number} of "{name}" has no size ({width} x {height} points).')
    scale = min(RENDER_SCALE, math.sqrt(MAX_RENDER_PIXELS / area))
    if scale < MIN_RENDER_SCALE:
        raise PdfError(
            f'Page {number} of "{name}" is too large to read: {width:,.0f} x {height:,.0f} '
            f"points ({width / 72:,.0f} x {height / 72:,.0f} inches)."
        )
    return scale


def render_at(page: pdfium.PdfPage, scale: float) -> Image.Image:
    """The page as RGB pixels at `scale` (`page_scale`'s)."""
    return page.render(scale=scale).to_pil().convert("RGB")


def read_page(engine: OcrEngine, page: pdfium.PdfPage, name: str, number: int) -> OcrResult:
    """The page's text: its text layer's, else the OCR's of its rendering."""
    started = time.perf_counter()
    scale = page_scale(page, name, number)
    result = text_layer_result(engine, page, scale, name)
    if result is None:
        result = engine.extract(load_image(render_at(page, scale), name=name))
        result.seconds = time.perf_counter() - started
    result.page = number
    return result


def text_layer_result(
    engine: OcrEngine, page: pdfium.PdfPage, scale: float, name: str
) -> OcrResult | None:
    """The page's text layer laid out on the pixels of its rendering at `scale`; None
    without one."""
    started = time.perf_counter()
    fragments = _text_layer(page, scale)
    if fragments is None:
        return None
    size = _rendered_size(page, scale)
    result = engine.result_from_fragments(fragments, size, started=started, source_name=name)
    result.text_layer = True
    return result


def _text_layer(page: pdfium.PdfPage, scale: float) -> list[TextFragment] | None:
    """The page's text runs as fragments in rendered-pixel coordinates; None if it has none."""
    textpage = page.get_textpage()
    try:
        if not _usable_text(textpage.get_text_range()):
            return None
        to_pixels = _pixel_mapper(page, scale)
        size = _rendered_size(page, scale)
        fragments = []
        for index in range(textpage.count_rects()):
            left, bottom, right, top = textpage.get_rect(index)
            text = textpage.get_text_bounded(left, bottom, right, top).strip()
            corners = [to_pixels(x, y) for x, y in ((left, top), (right, bottom))]
            box = _on_page(corners, size)
            if text and box is not None:
                fragments.append(TextFragment.from_box(" ".join(text.split()), box))
        return fragments or None
    finally:
        textpage.close()


def _on_page(
    corners: list[tuple[float, float]], size: tuple[int, int]
) -> tuple[int, int, int, int] | None:
    """A text run's box in whole pixels on the rendered page, at least a pixel each way (a
    0.1-pt font); None for one wholly off the page (not shown, so not carried over)."""
    (x0, y0), (x1, y1) = corners
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        return None
    left, right = max(min(x0, x1), 0), min(max(x0, x1), size[0])
    top, bottom = max(min(y0, y1), 0), min(max(y0, y1), size[1])
    if left > right or top > bottom:
        return None
    left, top = min(round(left), size[0] - 1), min(round(top), size[1] - 1)
    return left, top, max(round(right), left + 1), max(round(bottom), top + 1)


def _usable_text(text: str) -> bool:
    """Enough real characters: fonts without a Unicode map extract as private-use or
    replacement characters, and such a page reads better by OCR."""
    visible = [char for char in text if not char.isspace()]
    garbled = sum(
        1 for char in visible if char == "\ufffd" or unicodedata.category(char) in ("Co", "Cc")
    )
    return len(visible) >= MIN_TEXT_LAYER_CHARS and garbled <= MAX_GARBLED_SHARE * len(visible)


def _rendered_size(page: pdfium.PdfPage, scale: float) -> tuple[int, int]:
    width, height = page.get_size()
    if page.get_rotation() in (90, 270):
        width, height = height, width
    return round(width * scale), round(height * scale)


def _pixel_mapper(
    page: pdfium.PdfPage, scale: float
) -> Callable[[float, float], tuple[float, float]]:
    """PDF points -> pixels of the page as rendered (rotation applied). The rendering shows
    the page's box (its CropBox within its MediaBox), whose origin need not be 0,0 (a page
    cropped by pdfcrop or a scanner), so points are counted from its bottom left corner."""
    left, bottom, right, top = page.get_bbox()
    width, height = right - left, top - bottom
    rotation = page.get_rotation()

    def to_pixels(x: float, y: float) -> tuple[float, float]:
        x, y = x - left, y - bottom
        if rotation == 90:
            return y * scale, x * scale
        if rotation == 180:
            return (width - x) * scale, y * scale
        if rotation == 270:
            return (height - y) * scale, (width - x) * scale
        return x * scale, (height - y) * scale

    return to_pixels


def _without_pages(path: str | os.PathLike) -> bool:
    """A well-formed PDF of no pages, which PDFium refuses as if it were damaged."""
    from pypdf import PdfReader  # only on this rare path

    try:
        return len(PdfReader(Path(path), strict=True).pages) == 0
    except Exception:  # pypdf's errors on a damaged file: any of them
        return False


@contextmanager
def open_pdf(path: str | os.PathLike, name: str) -> Iterator[pdfium.PdfDocument]:
    problem = file_problem(path, name, what="a PDF")
    if problem is not None:
        raise PdfError(problem)
    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if "password" not in str(exc).lower() and _without_pages(path):
            raise PdfError(f'"{name}" is a PDF without pages: there is nothing to read.') from exc
        reason = "it is password-protected" if "password" in str(exc).lower() else "it is damaged"
        raise PdfError(f'"{name}" could not be opened as a PDF: {reason}.') from exc
    try:
        yield document
    finally:
        document.close()
