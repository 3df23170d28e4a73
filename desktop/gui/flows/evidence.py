"""After an answer: the lines of its question's images that it quotes are outlined on the
question's thumbnails, and its figures that no line holds are named on its card
(desktop/core/evidence.py), and again for each answer of a chat when it is opened. Only images
whose text the chat has extracted (Extract text, stored with the chat) are looked in: the fast
OCR is not run again for this."""

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
        # The answers being looked up, by ticket: their transcript, question and answer ids.
        self.pending: dict[int, tuple[Transcript, int, int]] = {}
        parts.session.opened.connect(self._on_opened)

    @Slot(object)
    def on_answer_shown(self, result: AskResult) -> None:
        answer = self._parts.session.transcript.last_answer()
        shown_here = answer is not None and answer.message_id == result.answer_message_id
        if result.answer.ok and answer is not None and shown_here:  # not in another chat
            self._look_up(answer)

    @Slot(object)
    def _on_opened(self, _chat: object) -> None:
        """A chat opened (a restart, or another chat): its answers' evidence, again."""
        self.pending.clear()  # the last chat's: no longer shown
        for entry in self._parts.session.transcript.entries:
            if entry.role is Role.ASSISTANT:
                self._look_up(entry)

    def _look_up(self, answer: Entry) -> None:
        transcript = self._parts.session.transcript
        question = transcript.question_of(answer.id)
        if question is None or not question.images:
            return
        extractions = [extraction_of(transcript, image.digest) for image in question.images]
        if any(extractions):
            ticket = self.finder.submit(answer.text, extractions)
            self.pending[ticket] = (transcript, question.id, answer.id)

    @Slot(object)
    def _on_found(self, found: EvidenceFound) -> None:
        pending = self.pending.pop(found.ticket, None)
        if pending is None:
            return  # a chat no longer shown
        transcript, question_id, answer_id = pending
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
