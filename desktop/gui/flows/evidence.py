"""After an answer: the lines of its question's images that it quotes are outlined on the
question's thumbnails, and its figures that no line holds are named on its card
(desktop/core/evidence.py), and again for each answer of a chat when it is opened. The lines
are the fast OCR's reads the service had for the answer (a grounded question's, or the chat's
extractions it was handed: `AskResult.reads`). What is found for a new answer is kept with it
in the history (schema 5, written on the storage thread), so a reopened chat shows the same
evidence even when nothing of the chat holds the read; an answer stored before that is looked
up in the chat's extractions (Extract text). The OCR is never run again for this."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from desktop.core.conversation import AskResult
from desktop.core.conversation.transcript import Entry, Transcript
from desktop.core.history import HistoryError, Role
from desktop.gui.flows.asking import ChatParts
from desktop.gui.workers.evidence_worker import EvidenceFinder, EvidenceFound

if TYPE_CHECKING:  # the OCR package loads only once an answer is looked up
    from desktop.core.evidence import Evidence
    from desktop.core.ocr.models import OcrResult


class EvidenceFlow(QObject):
    def __init__(self, parts: ChatParts, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._parts = parts
        self.finder = EvidenceFinder(self)
        self.finder.found.connect(self._on_found)
        # The answers being looked up, by ticket: their transcript, question and answer ids.
        self.pending: dict[int, tuple[Transcript, int, int]] = {}
        # The lookups whose evidence is kept with its stored answer (by ticket: the answer's
        # message id), also when another chat is opened before it is found.
        self._keeping: dict[int, int] = {}
        parts.session.opened.connect(self._on_opened)

    @Slot(object)
    def on_answer_shown(self, result: AskResult) -> None:
        answer = self._parts.session.transcript.last_answer()
        shown_here = answer is not None and answer.message_id == result.answer_message_id
        if result.answer.ok and answer is not None and shown_here:  # not in another chat
            self._look_up(answer, result.reads, keep=True)

    @Slot(object)
    def _on_opened(self, _chat: object) -> None:
        """A chat opened (a restart, or another chat): its answers' evidence, again."""
        self.pending.clear()  # the last chat's: no longer shown
        session = self._parts.session
        chat = session.conversation_id
        kept: dict[int, str] = {}
        with contextlib.suppress(HistoryError):  # unreadable: looked up as before
            kept = session.store.evidence_of(chat) if chat is not None else {}  # a read
        for entry in session.transcript.entries:
            if entry.role is not Role.ASSISTANT:
                continue
            stored = kept.get(entry.message_id) if entry.message_id is not None else None
            if stored is not None:
                self._restore(entry, stored)
            else:  # stored before answers kept theirs
                self._look_up(entry)

    def _restore(self, answer: Entry, stored: str) -> None:
        transcript = self._parts.session.transcript
        question = transcript.question_of(answer.id)
        if question is not None and question.images:
            ticket = self.finder.restore(stored)
            self.pending[ticket] = (transcript, question.id, answer.id)

    def _look_up(
        self, answer: Entry, reads: Sequence[OcrResult | None] = (), *, keep: bool = False
    ) -> None:
        """`reads`: the service's, when it has them (the answer just ended: grounded or
        handed the chat's extractions); else the chat's extractions (a reopened chat).
        `keep`: what is found is stored with the answer."""
        transcript = self._parts.session.transcript
        question = transcript.question_of(answer.id)
        if question is None or not question.images:
            return
        extractions: list[OcrResult | str | None] = list(reads)
        if len(extractions) != len(question.images) or not any(extractions):
            known = {read.digest: read.read for read in transcript.known_reads(question.images)}
            extractions = [known.get(image.digest) for image in question.images]
        if any(extractions):
            ticket = self.finder.submit(answer.text, extractions)
            self.pending[ticket] = (transcript, question.id, answer.id)
            if keep and answer.message_id is not None:
                self._keeping[ticket] = answer.message_id

    @Slot(object)
    def _on_found(self, found: EvidenceFound) -> None:
        keep_as = self._keeping.pop(found.ticket, None)
        if keep_as is not None and not found.evidence.empty:
            self._keep(keep_as, found.evidence)
        pending = self.pending.pop(found.ticket, None)
        if pending is None:
            return  # a chat no longer shown
        transcript, question_id, answer_id = pending
        if transcript is self._parts.session.transcript:  # still the chat shown
            self._parts.chat.show_evidence(question_id, answer_id, found.evidence)

    def _keep(self, message_id: int, evidence: Evidence) -> None:
        """Stores the answer's evidence on the storage thread (the GUI thread writes
        nothing); an answer rewound meanwhile is simply gone."""
        store, text = self._parts.session.store, json.dumps(evidence.to_dict())
        self._parts.session.storage.submit(lambda: store.set_evidence(message_id, text))
