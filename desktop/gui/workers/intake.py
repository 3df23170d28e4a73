"""Turning what the user drops, pastes or picks into images, off the GUI thread.

Dropped folders can hold hundreds of files and PDFs many pages, so decoding runs in the
global QThreadPool and the result comes back by a signal.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QMimeData, QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QImage

from desktop.core.errors import describe
from desktop.core.images import (
    PASTED_IMAGE_NAME,
    PDF_EXTENSION,
    ImageError,
    LoadedImage,
    collect_image_files,
)
from desktop.core.images import load_image as decode_image
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.thumbnails import load_qimage

logger = logging.getLogger(__name__)

DROPPED_IMAGE_NAME = "dropped image"
# Each attached page is a picture in memory (an A4 page is ~6 MB) and visual tokens for the
# model; a long PDF belongs to the batch OCR, not to a chat message.
MAX_PDF_PAGES = 20


@dataclass
class IntakeRequest:
    """Everything one drop, paste or file dialog offered."""

    paths: list[Path] = field(default_factory=list)
    pictures: list[tuple[QImage, str]] = field(default_factory=list)  # image data and its name
    web_addresses: list[str] = field(default_factory=list)  # cannot be fetched offline

    @property
    def empty(self) -> bool:
        return not (self.paths or self.pictures or self.web_addresses)


@dataclass
class IntakeResult:
    images: list[ImageRef] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # names of files that are not images
    problems: list[str] = field(default_factory=list)  # one sentence per unusable file

    def messages(self) -> list[str]:
        """What to tell the user, if anything."""
        out = list(self.problems)
        if self.refused:
            noun = "an image" if len(self.refused) == 1 else "images"
            out.insert(0, f"Not {noun}, so not attached: {name_list(self.refused)}.")
        return out


def request_from_mime(mime: QMimeData, *, pasted: bool = False) -> IntakeRequest:
    """Local files and folders (file URLs), raw image data (a browser or a screenshot tool),
    and web addresses, which an offline app can only refuse."""
    request = IntakeRequest()
    for url in mime.urls() if mime.hasUrls() else []:
        if url.isLocalFile():
            request.paths.append(Path(url.toLocalFile()))
        elif url.scheme() in ("http", "https", "ftp"):
            request.web_addresses.append(url.toString())
    if mime.hasImage():
        image = mime.imageData()
        if isinstance(image, QImage) and not image.isNull():
            name = PASTED_IMAGE_NAME if pasted else DROPPED_IMAGE_NAME
            request.pictures.append((image, name))
            request.web_addresses.clear()  # the browser sent the picture itself
    return request


def can_attach(mime: QMimeData) -> bool:
    return mime.hasImage() or any(
        url.isLocalFile() or url.scheme() in ("http", "https")
        for url in (mime.urls() if mime.hasUrls() else [])
    )


def load_request(request: IntakeRequest) -> IntakeResult:
    """Decodes everything in `request` (slow: call it off the GUI thread)."""
    result = IntakeResult()
    files, refused = collect_image_files(request.paths, accept_pdf=True)
    result.refused = [path.name for path in refused]
    for path in files:
        try:
            if path.suffix.lower() == PDF_EXTENSION:
                pages, total = pdf_pages(path)
                result.images.extend(ImageRef.of(page) for page in pages)
                if total > len(pages):
                    result.problems.append(
                        f'Only the first {len(pages)} of the {total} pages of "{path.name}" '
                        "were attached."
                    )
            else:
                result.images.append(ImageRef.of_file(decode_image(path), path))
        except ImageError as exc:
            result.problems.append(str(exc))
    for image, name in request.pictures:
        try:
            result.images.append(ImageRef.of(load_qimage(image, name)))
        except ImageError as exc:
            result.problems.append(str(exc))
    if request.web_addresses:
        result.problems.append(
            f"{name_list(request.web_addresses)}: DeskLens works offline and cannot download "
            "images. Save the image, then drop the file."
        )
    return result


def pdf_pages(path: Path, limit: int | None = None) -> tuple[list[LoadedImage], int]:
    """The first `limit` (default MAX_PDF_PAGES) pages of a PDF as images, and its page
    count. Rendered at the OCR package's scale, so small print stays legible.
    Raises ImageError (PdfError) when the file cannot be read."""
    from desktop.core.ocr.pdf import render_pages

    pictures, total = render_pages(path, limit or MAX_PDF_PAGES)
    pages = [
        decode_image(picture, name=f"{path.stem} p{number}.png")
        for number, picture in enumerate(pictures, start=1)
    ]
    return pages, total


def name_list(names: Iterable[str], shown: int = 3) -> str:
    """Names for a sentence: "a, b and c", or "a, b, c and 4 more"."""
    names = list(names)
    if len(names) <= shown:
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{', '.join(names[:shown])} and {len(names) - shown} more"


class _Relay(QObject):
    done = Signal(IntakeResult)


class _IntakeTask(QRunnable):
    def __init__(self, request: IntakeRequest, relay: _Relay) -> None:
        super().__init__()
        self._request = request
        self._relay = relay

    def run(self) -> None:
        try:
            result = load_request(self._request)
        except Exception as exc:  # never let a pool thread die silently
            logger.exception("image intake failed")
            result = IntakeResult(problems=[f"The files could not be read: {describe(exc)}"])
        self._relay.done.emit(result)


class Intake(QObject):
    """Loads requests in the thread pool; `loaded` fires on the GUI thread per request."""

    loaded = Signal(IntakeResult)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._relay = _Relay(self)
        self._relay.done.connect(self.loaded)

    def submit(self, request: IntakeRequest) -> None:
        if not request.empty:
            QThreadPool.globalInstance().start(_IntakeTask(request, self._relay))
