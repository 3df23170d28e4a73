"""The readability guard's reads of attached images, off the GUI thread: the fast OCR of one
picture (about a second on two cores), or the parsing of the chat's stored extraction of it,
in the global QThreadPool; the result comes back by a queued signal with its ticket. Nothing is
stored: the guard only needs the lines' boxes."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop.gui.image_ref import ImageRef
from desktop.gui.workers.evidence_worker import results_of
from desktop.gui.workers.threads import run_in_pool

if TYPE_CHECKING:  # the OCR package loads in the pool thread, not at start-up
    from desktop.core.ocr import OcrEngine
    from desktop.core.ocr.models import OcrResult

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LinesRead:
    ticket: int
    digest: str
    result: OcrResult | None  # None: the picture or the OCR could not be read


class LineReader(QObject):
    """`read` fires on this object's (the GUI) thread."""

    read = Signal(LinesRead)

    def __init__(self, ocr_engine: Callable[[], OcrEngine], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ocr_engine = ocr_engine
        self._tickets = itertools.count(1)

    def submit(self, ref: ImageRef, known: OcrResult | str | None = None) -> int:
        """Reads `ref`'s lines: from `known` (a stored extraction, as its JSON) when the chat
        has one, else with the fast OCR; the ticket its result will carry."""
        ticket = next(self._tickets)
        run_in_pool(lambda: self._read_lines(ticket, ref, known), self.read)
        return ticket

    def _read_lines(self, ticket: int, ref: ImageRef, known: OcrResult | str | None) -> LinesRead:
        """The pool thread's work: never raises."""
        result: OcrResult | None = None
        try:
            if known is not None:
                result = results_of([known])[0]
            else:
                result = self._ocr_engine().extract(ref.load())
        except Exception:  # OCR models missing, a file gone: no warning, nothing else lost
            logger.warning("the readability guard could not read %s", ref.name, exc_info=True)
        return LinesRead(ticket, ref.digest, result)
