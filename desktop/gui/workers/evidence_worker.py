"""An answer's evidence (desktop/core/evidence.py) found off the GUI thread: the fuzzy match
of a long answer against hundreds of OCR lines takes up to a second, so it runs in the global
QThreadPool and the result comes back by a queued signal with its request's ticket."""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop.gui.workers.threads import run_in_pool

if TYPE_CHECKING:  # the OCR package loads only once an answer is looked up (a fast start)
    from desktop.core.evidence import Evidence
    from desktop.core.ocr.models import OcrResult

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvidenceFound:
    ticket: int
    evidence: Evidence


class EvidenceFinder(QObject):
    """`found` fires on this object's (the GUI) thread: for a lookup, and for evidence kept
    in the history (read back in the pool too: the OCR package loads only there)."""

    found = Signal(EvidenceFound)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tickets = itertools.count(1)

    def submit(self, answer: str, extractions: Sequence[OcrResult | str | None]) -> int:
        """Looks `answer` up in the question images' reads, one per image: a result (the
        service's), an extraction's JSON (`OcrResult.to_json`), or None where the image was
        not read; the ticket its result will carry."""
        ticket = next(self._tickets)
        reads = tuple(extractions)  # a copy: the caller's list may change before the pool runs
        run_in_pool(lambda: _find(ticket, answer, reads, None), self.found)
        return ticket

    def restore(self, kept: str) -> int:
        """Evidence the history kept (`Evidence.to_dict` as JSON), read back; its ticket."""
        ticket = next(self._tickets)
        run_in_pool(lambda: _find(ticket, "", (), kept), self.found)
        return ticket


def results_of(extractions: Sequence[OcrResult | str | None]) -> list[OcrResult]:
    """One result per image (an image not read, or damaged JSON: no lines), in order."""
    from desktop.core.ocr.models import OcrResult
    from desktop.core.ocr.stored import result_from_dict

    results = []
    for text in extractions:
        if isinstance(text, OcrResult):
            results.append(text)
            continue
        try:
            results.append(result_from_dict(json.loads(text or "{}")))
        except ValueError:  # json.JSONDecodeError is one too
            results.append(OcrResult(lines=[], width=0, height=0, seconds=0.0))
    return results


def _find(
    ticket: int, answer: str, extractions: Sequence[OcrResult | str | None], kept: str | None
) -> EvidenceFound:
    """The pool thread's work: `kept` read back, else `answer` looked up; never raises."""
    from desktop.core import bounded_json
    from desktop.core.evidence import Evidence, find_evidence

    try:
        if kept is not None:  # a damaged value is no evidence, not a failure
            evidence = Evidence.from_dict(bounded_json.stored(kept))
        else:
            evidence = find_evidence(answer, results_of(extractions))
    except Exception:  # never let a pool thread die silently; no evidence is shown
        logger.exception("finding an answer's evidence failed")
        evidence = Evidence()
    return EvidenceFound(ticket, evidence)
