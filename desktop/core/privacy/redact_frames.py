"""Redacting a multi-page TIFF (a scanner's) or an animated GIF, WebP or PNG: every page or
frame redacted as an image (`redact_page`; a frame repeated exactly is read once), the filled
ones saved as one TIFF, so that none is dropped (`--in-place` included) and no frame keeps what
another had filled. A page on which the OCR still reads a filled item, or one it cannot prove
clean, ends the work with nothing written, as for a PDF."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO

from PIL import Image

from desktop.core import atomic
from desktop.core.images import LoadedImage
from desktop.core.ocr.pdf import PageCallback
from desktop.core.privacy.patterns import UserPattern
from desktop.core.privacy.redact import Reader, Redaction, redact_page
from desktop.core.privacy.redact_pdf import PageRedaction, PdfRedaction, page_of


def redact_frames(
    read: Reader,
    frames: Sequence[LoadedImage],
    patterns: Sequence[UserPattern] = (),
    on_page: PageCallback | None = None,
) -> PdfRedaction:
    """Every frame redacted in turn; `images` holds the filled ones (none if a page leaked or
    could not be proven clean)."""
    pages: list[PageRedaction] = []
    images: list[Image.Image] = []
    name = frames[0].name if frames else ""
    done: dict[str, Redaction] = {}  # by the frame's digest: an animation repeats frames
    for number, frame in enumerate(frames, start=1):
        if frame.digest not in done:
            done[frame.digest] = redact_page(read, frame, patterns)
        redaction = done[frame.digest]
        pages.append(page_of(redaction, number))
        if redaction.outcome in ("leaked", "unproven"):
            return PdfRedaction(name, tuple(pages), len(frames), b"", len(patterns), "TIFF")
        images.append(redaction.image)
        if on_page is not None:
            on_page(number, len(frames))
    return PdfRedaction(name, tuple(pages), len(frames), b"", len(patterns), "TIFF", tuple(images))


def save_frames(redaction: PdfRedaction, path: str | os.PathLike) -> None:
    """The filled pages as one lossless TIFF without metadata, written whole."""

    def save(file: IO[bytes]) -> None:
        first, *rest = redaction.images
        first.save(file, format="TIFF", save_all=True, append_images=rest)

    atomic.write_output(path, save, lambda file: Image.open(file).verify())
