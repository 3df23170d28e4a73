"""Redacting an attached picture off the GUI thread (issue 49): the fast OCR reads it, the
private spans are filled, the filled copy is read again (`core/privacy/redact.py`), in the
global QThreadPool; the result comes back by a queued signal with its ticket. Nothing is
written: the redacted copy lives in memory until it is sent (then the history keeps it)."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop.core.errors import describe
from desktop.core.images import ImageError, load_image
from desktop.gui.image_ref import ImageRef
from desktop.gui.workers.threads import run_in_pool

if TYPE_CHECKING:  # the OCR package loads in the pool thread, not at start-up
    from desktop.core.ocr import OcrEngine
    from desktop.core.privacy.patterns import UserPattern
    from desktop.core.privacy.redact import Redaction

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Redacted:
    ticket: int
    original: ImageRef
    copy: ImageRef | None  # the filled picture (None: nothing filled, or it failed)
    redaction: Redaction | None  # what was done (None: the picture or the OCR failed)
    error: str | None = None  # the sentence when it failed


def redacted_name(name: str) -> str:
    """ "shot.png" -> "shot (redacted).png": the chip and the history say what was sent."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem} (redacted).{suffix}" if dot and stem else f"{name} (redacted)"


class Redactor(QObject):
    """`done` fires on this object's (the GUI) thread."""

    done = Signal(Redacted)

    def __init__(self, ocr_engine: Callable[[], OcrEngine], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ocr_engine = ocr_engine
        self._tickets = itertools.count(1)

    def submit(self, ref: ImageRef, patterns: Sequence[UserPattern]) -> int:
        ticket = next(self._tickets)
        patterns = tuple(patterns)  # a copy: the caller's list may change before the pool runs
        run_in_pool(lambda: self.redact(ref, patterns, ticket), self.done)
        return ticket

    def redact(self, ref: ImageRef, patterns: Sequence[UserPattern], ticket: int = 0) -> Redacted:
        """The work itself (the pool's thread): never raises."""
        from desktop.core.privacy.redact import redact_page

        try:
            redaction = redact_page(self._ocr_engine().extract, ref.load(), patterns)
        except ImageError as exc:
            return Redacted(ticket, ref, None, None, str(exc))
        except Exception as exc:  # the OCR models, memory: said, never a crash
            logger.exception("redaction failed on %s", ref.name)
            return Redacted(
                ticket, ref, None, None, f"Could not redact {ref.name}: {describe(exc)}"
            )
        if redaction.outcome != "redacted":
            return Redacted(ticket, ref, None, redaction)
        image = load_image(redaction.image, name=redacted_name(ref.name))
        return Redacted(ticket, ref, ImageRef.of(image), redaction)
