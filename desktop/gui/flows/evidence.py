"""After an answer: the lines of its question's images that it quotes are outlined on the
question's thumbnails, and its figures that no line holds are named on its card
(desktop/core/evidence.py). Only images whose text the chat has extracted (Extract text, this
session or stored with the chat) are looked in: the fast OCR is not run again for this."""

from __future__ import annotations

from PySide6.QtCore import QObject, Slot

from desktop.core.conversation import AskResult
from desktop.core.conversation.transcript import Entry, Transcript
from desktop.core.history import Role
from desktop.gui.flows.asking import ChatParts
from desktop.gui.workers.evidence_worker import EvidenceFinder, EvidenceFound


class EvidenceFlow(QObject):
    def __init__(self, parts: ChatParts, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._parts = parts
        self.finder = EvidenceFinder(self)
        self.finder.found.connect(self._on_found)
        # The answer being looked up: its ticket, transcript and question and answer entries.
        self.pending: tuple[int, Transcript, int, int] | None = None

    @Slot(object)
    def on_answer_shown(self, result: AskResult) -> None:
        transcript = self._parts.session.transcript
        answer = transcript.last_answer()
        if not result.answer.ok or answer is None or answer.message_id != result.answer_message_id:
            return  # failed, or not shown here (another chat is open)
        question = transcript.question_of(answer.id)
        if question is None or not question.images:
            return
        extractions = [extraction_of(transcript, image.digest) for image in question.images]
        if not any(extractions):
            return
        ticket = self.finder.submit(answer.text, extractions)
        self.pending = (ticket, transcript, question.id, answer.id)

    @Slot(object)
    def _on_found(self, found: EvidenceFound) -> None:
        pending, self.pending = self.pending, None
        if pending is None or pending[0] != found.ticket:
            self.pending = pending  # an older answer's: a newer one is being looked up
            return
        _ticket, transcript, question_id, answer_id = pending
        if transcript is self._parts.session.transcript:  # still the chat shown
            self._parts.chat.show_evidence(question_id, answer_id, found.evidence)


def extraction_of(transcript: Transcript, digest: str) -> str | None:
    """The JSON of the chat's latest extraction of the image `digest` (None: not extracted)."""
    extractions: list[Entry] = [
        entry
        for entry in transcript.entries
        if entry.role is Role.OCR and entry.ocr is not None and entry.images
        if entry.images[0].digest == digest
    ]
    return extractions[-1].ocr.json if extractions and extractions[-1].ocr else None
