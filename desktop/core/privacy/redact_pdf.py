"""Redacting a PDF: every page rendered and redacted as an image (`redact_page`: the items found
in its text layer, or by the OCR where it has none or the text layer holds none; filled; read
back by the OCR), then written to a new PDF of those images with the tagged text invisible on
them (searchable, as the OCR's searchable PDFs are).

Nothing of the original but its pages' look is carried over (no text layer, vector text,
links, forms, attachments or metadata), so no value survives under a box. Pages are rendered
and read one at a time; a page on which the OCR still reads a filled item, or one it reads
unsurely whichever way up (`Redaction.proven`), ends the work, and nothing is written.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PIL import Image
from pypdf import PdfWriter

from desktop.core import atomic
from desktop.core.images import load_image
from desktop.core.ocr.formats import check_pdf
from desktop.core.ocr.models import OcrDocument, OcrResult
from desktop.core.ocr.pdf import (
    PageCallback,
    open_pdf,
    page_scale,
    render_at,
    text_layer_result,
)
from desktop.core.ocr.searchable_pdf import PageImage, add_image_page
from desktop.core.privacy.models import Span
from desktop.core.privacy.patterns import UserPattern
from desktop.core.privacy.redact import (
    Outcome,
    Redaction,
    clean_sentence,
    leaked_sentence,
    outcome_of,
    redact_page,
    redacted_sentence,
    unproven_sentence,
    unsure_sentence,
)
from desktop.core.privacy.spans import find_spans

if TYPE_CHECKING:
    from pypdf.generic import IndirectObject

    from desktop.core.ocr.engine import OcrEngine


@dataclass(frozen=True)
class PageRedaction:
    """What redacting one page did (its filled pixels went into the new PDF)."""

    number: int  # from 1
    outcome: Outcome
    spans: tuple[Span, ...]
    leaks: tuple[Span, ...]
    result: OcrResult  # the page's text, its items tagged
    unsure_lines: int


@dataclass(frozen=True)
class PdfRedaction:
    """What redacting a PDF, or a multi-page TIFF (`redact_frames.py`), did; `pdf` is the
    redacted PDF, `images` the TIFF's filled pages (empty when a page leaked)."""

    source_name: str
    pages: tuple[PageRedaction, ...]  # those read: up to the first that leaked
    page_count: int
    pdf: bytes
    own_patterns: int = 0
    kind: str = "PDF"  # what the pages are of, for the sentences: "PDF", "TIFF"
    images: tuple[Image.Image, ...] = ()

    @property
    def spans(self) -> tuple[Span, ...]:
        return tuple(span for page in self.pages for span in page.spans)

    @property
    def leaks(self) -> tuple[Span, ...]:
        return tuple(span for page in self.pages for span in page.leaks)

    @property
    def outcome(self) -> Outcome:
        readable = any(page.outcome != "unreadable" for page in self.pages)
        proven = all(page.outcome != "unproven" for page in self.pages)
        return outcome_of(self.spans, self.leaks, readable, proven)

    def summary(self, target: str = "") -> str:
        """One sentence, as `Redaction.summary`, that counts pages."""
        if self.outcome == "leaked":
            leaked = next(page for page in self.pages if page.leaks)
            return leaked_sentence(leaked.leaks, f" {leaked.number}")
        if self.outcome == "unproven":
            unproven = next(page for page in self.pages if page.outcome == "unproven")
            return unproven_sentence(unproven.spans, f"page {unproven.number}")
        if self.outcome == "unreadable":
            return (
                f"Could not read any text on the {_pages(self.page_count)} of this {self.kind}: "
                "nothing was redacted (they may be blank, or scans too faint to read)."
            )
        if self.outcome == "clean":
            lines = sum(len(page.result.lines) for page in self.pages)
            return clean_sentence(lines, self.own_patterns, f" on {_pages(self.page_count)}")
        with_items = sum(1 for page in self.pages if page.spans)
        where = f" on {with_items} of {_pages(self.page_count)}"
        return redacted_sentence(self.spans, target, where)

    def warning(self) -> str | None:
        """Pages the OCR found no text on, and lines it could not read: not checked."""
        sentences = []
        blank = [str(page.number) for page in self.pages if page.outcome == "unreadable"]
        if blank and len(blank) < len(self.pages):
            many = len(blank) > 1
            sentences.append(
                f"No text could be read on page{'s' if many else ''} {', '.join(blank)}, so "
                f"{'they were' if many else 'it was'} not checked (kept as rendered)."
            )
        unsure = unsure_sentence(sum(page.unsure_lines for page in self.pages), "of the PDF")
        if unsure:
            sentences.append(unsure)
        return " ".join(sentences) or None

    def text(self) -> str:
        """Every page's text with its items tagged, pages apart as `OcrDocument.text`."""
        return OcrDocument(self.source_name, [page.result for page in self.pages]).text()

    def report(self) -> dict:
        """The spans filled and the leaks, each with its page, for JSON."""
        return {
            "pages": self.page_count,
            "spans": [{**s.to_json(), "page": p.number} for p in self.pages for s in p.spans],
            "leaks": [{**s.to_json(), "page": p.number} for p in self.pages for s in p.leaks],
        }


def redact_pdf(
    engine: OcrEngine,
    path: Path,
    patterns: tuple[UserPattern, ...] = (),
    on_page: PageCallback | None = None,
) -> PdfRedaction:
    """Redacts every page of the PDF at `path`; see the module's docstring; `on_page` is told
    (pages done, pages in all) after each page. Raises ImageError (PdfError) for a file that
    cannot be opened or a page that cannot be read."""
    name, writer = path.name, PdfWriter()
    font: IndirectObject | None = None  # the text layer's, shared by the pages
    pages: list[PageRedaction] = []
    with open_pdf(path, name) as document:
        total = len(document)
        for index in range(total):
            number = index + 1
            page = document[index]
            try:
                scale = page_scale(page, name, number)
                image = load_image(render_at(page, scale), name=name)
                first = text_layer_result(engine, page, scale, name)
            finally:
                page.close()
            if first is not None and not find_spans(first, patterns):
                first = None  # the OCR reads the page: a scan may sit under a text layer
            redaction = redact_page(engine.extract, image, patterns, first)
            pages.append(page_of(redaction, number))
            result = redaction.result
            if redaction.outcome in ("leaked", "unproven"):  # nothing is written
                return PdfRedaction(name, tuple(pages), total, b"", len(patterns))
            filled = PageImage(load_image(redaction.image, name=name), dpi=72.0 * scale)
            font = add_image_page(writer, filled, result, font)
            if on_page is not None:
                on_page(number, total)
    return PdfRedaction(name, tuple(pages), total, _written(writer), len(patterns))


def page_of(redaction: Redaction, number: int) -> PageRedaction:
    """One page's redaction as a page of a document (its result numbered)."""
    redaction.result.page = number
    return PageRedaction(
        number,
        redaction.outcome,
        redaction.spans,
        redaction.leaks,
        redaction.result,
        redaction.unsure_lines,
    )


def save_pdf(redaction: PdfRedaction, path: Path) -> Path:
    """The redacted PDF written whole (temporary file, then renamed), read back as a PDF."""
    return atomic.write_output(path, lambda file: file.write(redaction.pdf), check_pdf)


def _written(writer: PdfWriter) -> bytes:
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def _pages(count: int) -> str:
    return f"{count} page{'s' if count != 1 else ''}"
