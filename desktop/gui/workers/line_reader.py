"""The readability guard's reads of attached images, off the GUI thread: the fast OCR of one
picture (about a second on two cores), or the parsing of the chat's stored extraction of it,
in the global QThreadPool; the result comes back by a queued signal with its ticket. Nothing is
stored: the guard only needs the lines' boxes."""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from desktop.gui.image_ref import ImageRef
from desktop.gui.workers.evidence_worker import results_of

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

    read = Signal(object)  # LinesRead

    def __init__(self, ocr_engine: Callable[[], OcrEngine], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._ocr_engine = ocr_engine
        self._tickets = itertools.count(1)

    def submit(self, ref: ImageRef, known: OcrResult | str | None = None) -> int:
        """Reads `ref`'s lines: from `known` (a stored extraction, as its JSON) when the chat
        has one, else with the fast OCR; the ticket its result will carry."""
        ticket = next(self._tickets)
        task = _ReadTask(ticket, ref, known, self._ocr_engine, self)
        QThreadPool.globalInstance().start(task)
        return ticket


class _ReadTask(QRunnable):
    def __init__(
        self,
        ticket: int,
        ref: ImageRef,
        known: OcrResult | str | None,
        ocr_engine: Callable[[], OcrEngine],
        relay: LineReader,
    ) -> None:
        super().__init__()
        self._ticket, self._ref, self._known = ticket, ref, known
        self._ocr_engine, self._relay = ocr_engine, relay

    def run(self) -> None:
        result: OcrResult | None = None
        try:
            if self._known is not None:
                result = results_of([self._known])[0]
            else:
                result = self._ocr_engine().extract(self._ref.load())
        except Exception:  # OCR models missing, a file gone: no warning, nothing else lost
            logger.warning("the readability guard could not read %s", self._ref.name, exc_info=True)
        with contextlib.suppress(RuntimeError):  # its window is gone: nobody waits for it
            self._relay.read.emit(LinesRead(self._ticket, self._ref.digest, result))
