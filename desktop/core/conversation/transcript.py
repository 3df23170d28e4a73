"""The chat as data: what the window shows, kept apart from the widgets that show it.

A `Transcript` is loaded from the store when a chat is opened and appended from results while
it is asked. Each entry has an id (its place in this transcript, stable while it is shown) and
the stored message's id once it has one. Retry, Regenerate and Edit all ask
`request_for(entry_id, ...)`: the question's own typed words, prompt, images and settings,
whether the chat was just asked or reopened after a restart. Qt-free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from desktop.core.chat import AnswerStats, ErrorKind, GenerationSettings
from desktop.core.conversation.models import (
    AskRequest,
    Context,
    Ground,
    KnownRead,
    NoContext,
    QuestionImage,
    StoredChat,
)
from desktop.core.draft_texts import ocr_source_texts
from desktop.core.history.ocr_text import OcrText
from desktop.core.history.records import AskedWith, Finish, Role, StoredImage, StoredMessage

if TYPE_CHECKING:
    from desktop.core.history.handle import ChatHandle
    from desktop.core.ocr import OcrEngine

_STAT_FIELDS = {f.name for f in fields(AnswerStats)}


class EntryState(str, Enum):
    """How an answer entry ended."""

    ANSWERED = "answered"
    STOPPED = "stopped"  # by the user
    CUT_SHORT = "cut_short"  # the answer length ran out
    FAILED = "failed"  # an error entry: its `error_kind` says why


_STATE_OF_FINISH = {Finish.STOPPED: EntryState.STOPPED, Finish.LENGTH: EntryState.CUT_SHORT}


@dataclass(frozen=True)
class Entry:
    id: int  # this transcript's own: intents name entries by it
    role: Role
    text: str  # a question's typed words; an answer's, error's, extraction's or note's text
    prompt: str = ""  # a question's composed prompt ("" when the model read just `text`)
    images: tuple[QuestionImage, ...] = ()
    asked: AskedWith = AskedWith()  # a question's preset, settings and context
    ocr: OcrText | None = None  # an extraction
    stats: AnswerStats | None = None  # an answer's figures (the card's speed line reads them)
    state: EntryState | None = None  # an answer's or error's end
    error_kind: ErrorKind | None = None
    message_id: int | None = None  # the stored message (None: not stored, or not yet)

    @property
    def model_text(self) -> str:
        return self.prompt or self.text


@dataclass(frozen=True)
class Means:
    """What asking again needs that the transcript does not hold: today's settings (for a
    question stored before its own were), the OCR to ground an edited question with, and
    the system prompt a chat's first question is composed with."""

    defaults: GenerationSettings = field(default_factory=GenerationSettings)
    ocr: Callable[[], OcrEngine] | None = None
    system_prompt: str = ""


@dataclass(frozen=True)
class Edit:
    """An edited question: its new words and images replace the entry's."""

    text: str
    images: tuple[QuestionImage, ...]


class Transcript:
    """The entries of one chat, oldest first. Use it on one thread (the GUI's)."""

    def __init__(self) -> None:
        self._entries: list[Entry] = []
        self._next_id = 1

    @classmethod
    def from_stored(
        cls, messages: Iterable[StoredMessage], image: Callable[[StoredImage], QuestionImage]
    ) -> Transcript:
        """A reopened chat; `image` turns a stored picture into one a request can load."""
        transcript = cls()
        for message in messages:
            transcript.add(**_entry_fields(message, image))
        return transcript

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries)

    def add(self, role: Role, text: str, **details: Any) -> Entry:  # noqa: ANN401
        entry = Entry(self._next_id, role, text, **details)
        self._next_id += 1
        self._entries.append(entry)
        return entry

    def update(self, entry_id: int, **changes: Any) -> Entry | None:  # noqa: ANN401
        """The entry with `changes` (e.g. its stored id once saved); None when it is gone."""
        index = self._index(entry_id)
        if index is None:
            return None
        self._entries[index] = replace(self._entries[index], **changes)
        return self._entries[index]

    def get(self, entry_id: int) -> Entry | None:
        index = self._index(entry_id)
        return self._entries[index] if index is not None else None

    def remove(self, entry_id: int) -> None:
        self._entries = [entry for entry in self._entries if entry.id != entry_id]

    def from_entry(self, entry_id: int) -> list[Entry]:
        """The entry and every later one: what a regenerate or an edit drops."""
        index = self._index(entry_id)
        return list(self._entries[index:]) if index is not None else []

    def stored_from(self, entry_id: int) -> tuple[int, ...]:
        """The stored messages of the entry and every later one: what the store drops."""
        return tuple(e.message_id for e in self.from_entry(entry_id) if e.message_id is not None)

    def drop_from(self, entry_id: int) -> list[Entry]:
        dropped = self.from_entry(entry_id)
        if dropped:
            self._entries = self._entries[: len(self._entries) - len(dropped)]
        return dropped

    def question_of(self, entry_id: int) -> Entry | None:
        """The question an entry answers (a question is its own)."""
        index = self._index(entry_id)
        if index is None:
            return None
        for entry in reversed(self._entries[: index + 1]):
            if entry.role is Role.USER:
                return entry
        return None

    def questions(self) -> list[Entry]:
        return [entry for entry in self._entries if entry.role is Role.USER]

    def images(self) -> list[QuestionImage]:
        """Every picture the chat's questions show, once each."""
        seen: dict[str, QuestionImage] = {}
        for question in self.questions():
            for image in question.images:
                seen.setdefault(image.digest, image)
        return list(seen.values())

    def known_text(self, images: Sequence[QuestionImage]) -> list[str]:
        """The fast-OCR text the chat already shows for these images (Extract text was
        clicked): the answer often copies it, so the model drafts from it."""
        digests = {image.digest for image in images}
        texts: dict[str, None] = {}  # ordered and without repeats
        for entry in self._entries:
            if entry.ocr is not None and entry.images and entry.images[0].digest in digests:
                texts.update(dict.fromkeys(ocr_source_texts(entry.ocr.text, entry.ocr.markdown)))
        return list(texts)

    def known_reads(self, images: Sequence[QuestionImage]) -> tuple[KnownRead, ...]:
        """The chat's latest extraction of each of these images (by content), as the service
        takes it: grounding and drafting from it, and the answer's evidence, read no OCR."""
        latest: dict[str, str] = {}
        for entry in self._entries:
            if entry.ocr is not None and entry.ocr.json and entry.images:
                latest[entry.images[0].digest] = entry.ocr.json
        digests = dict.fromkeys(image.digest for image in images)
        return tuple(KnownRead(d, latest[d]) for d in digests if d in latest)

    def has_answers(self) -> bool:
        """The chat has answered turns (a chat of extracted text alone has none)."""
        return any(entry.role is Role.ASSISTANT for entry in self._entries)

    def last_answer(self) -> Entry | None:
        answers = [entry for entry in self._entries if entry.role is Role.ASSISTANT]
        return answers[-1] if answers else None

    def request_for(
        self, entry_id: int, chat: ChatHandle, means: Means, edit: Edit | None = None
    ) -> AskRequest | None:
        """The request that asks the question of `entry_id` again, the way it was asked:
        an error's Retry, an answer's Regenerate, or (`edit`) a question's Edit. What it
        replaces goes from the store with it (`drops`). None: no such question."""
        entry = self.get(entry_id)
        question = self.question_of(entry_id)
        if entry is None or question is None:
            return None
        settings = question.asked.settings or means.defaults
        if edit is not None or question.message_id is None:
            return self._composed_again(question, chat, means, settings, edit)
        drops = self.stored_from(entry.id) if entry is not question else ()
        return AskRequest(
            question.model_text,
            question.images,
            settings,
            # Stored already: asked again, not stored again; what it replaces goes.
            StoredChat(chat, user_message_id=question.message_id, drops=drops),
            hints=tuple(self.known_text(question.images)),
            preset=question.asked.preset,
            known_reads=self.known_reads(question.images),
            typed=question.text,
            regions=question.asked.regions,  # their sentence is in the stored prompt
        )

    def _composed_again(
        self,
        question: Entry,
        chat: ChatHandle,
        means: Means,
        settings: GenerationSettings,
        edit: Edit | None,
    ) -> AskRequest:
        """A question asked anew: an edit (the stored question and what followed go), or
        one that was never stored. Grounded and system-prompted as the original was."""
        if edit is not None:
            text, images = edit.text, edit.images
        else:
            text, images = question.text, question.images
        return AskRequest(
            text,
            images,
            settings,
            StoredChat(chat, drops=self.stored_from(question.id)),
            hints=tuple(self.known_text(images)),
            context=self._context(question, images, means),
            system=means.system_prompt if question.asked.system else "",
            preset=question.asked.preset,
            regions=question.asked.regions if images == question.images else (),
            known_reads=self.known_reads(images),
        )

    @staticmethod
    def _context(question: Entry, images: tuple[QuestionImage, ...], means: Means) -> Context:
        """Grounded again when the original was and there are images (and an OCR) to read."""
        if question.asked.grounded and images and means.ocr is not None:
            return Ground(means.ocr)
        return NoContext()

    def _index(self, entry_id: int) -> int | None:
        for index, entry in enumerate(self._entries):
            if entry.id == entry_id:
                return index
        return None


def stats_from_dict(data: dict[str, Any] | None) -> AnswerStats | None:
    if not data:
        return None
    return AnswerStats(**{k: v for k, v in data.items() if k in _STAT_FIELDS})


def _entry_fields(
    message: StoredMessage, image: Callable[[StoredImage], QuestionImage]
) -> dict[str, Any]:
    details: dict[str, Any] = {
        "role": message.role,
        "text": message.text,
        "images": tuple(image(stored) for stored in message.images),
        "message_id": message.id,
    }
    if message.role is Role.USER:
        details.update(prompt=message.prompt or "", asked=message.asked)
    elif message.role is Role.ASSISTANT:
        finish = message.finish or (Finish.STOPPED if message.stopped else Finish.DONE)
        state = _STATE_OF_FINISH.get(finish, EntryState.ANSWERED)
        details.update(stats=stats_from_dict(message.stats), state=state)
    elif message.role is Role.ERROR:
        details.update(state=EntryState.FAILED, error_kind=message.error_kind or ErrorKind.FAILED)
    elif message.role is Role.OCR:
        details.update(ocr=OcrText.from_message(message))
    return details
