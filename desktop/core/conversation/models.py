"""Requests and results of the conversation service: frozen, so they can cross threads. A
request's cancellation is a separate `threading.Event` handed in beside it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from desktop.core.chat import Answer, GenerationSettings, Turn

if TYPE_CHECKING:
    from desktop.core.history.handle import ChatHandle
    from desktop.core.images import LoadedImage
    from desktop.core.ocr import OcrEngine
    from desktop.core.regions import Region


class QuestionImage(Protocol):
    """An image the service decodes when it needs the pixels (a `LoadedImage` is one; the
    GUI's `ImageRef` keeps a file path or a stored image instead)."""

    @property
    def name(self) -> str: ...

    @property
    def digest(self) -> str: ...

    def load(self) -> LoadedImage:
        """The decoded image; raises `ImageError`."""
        ...


@dataclass(frozen=True, eq=False)
class AskRequest:
    """One question. Where it belongs, at most one of:
    `chat` (a stored chat: created if new, replayed from the store, the turn saved),
    `history` (the earlier turns, given by the caller: the API), `follow_up` (the service's
    own unsaved conversation goes on: `desklens chat`); none: a new conversation of one turn."""

    question: str  # as typed; or the whole composed prompt (a retry of a stored question)
    images: tuple[QuestionImage, ...] = ()
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    chat: ChatHandle | None = None
    history: tuple[Turn, ...] | None = None
    follow_up: bool = False
    hints: tuple[str, ...] = ()  # texts the answer is likely to copy (fast OCR): drafts
    user_message_id: int | None = None  # a retry: the question is stored already
    rewind_from: int | None = None  # regenerate/edit: this stored message and later ones go
    # Put before the question once, by the service ("Use the extracted text", a new chat's
    # system prompt); the composed prompt is what is stored and what `AskResult.prompt` says.
    ground: Callable[[], OcrEngine] | None = None
    ground_texts: tuple[str, ...] = ()  # grounding already read (the CLI's OCR results)
    system: str = ""
    preset: str | None = None  # the key of the preset asked with: stored with the question
    typed: str | None = None  # the typed words when `question` is a stored composed prompt
    # Boxes the question is about: their bbox_2d goes before it and their crops after the
    # images (regions.py); stored with the question.
    regions: tuple[Region, ...] = ()

    @property
    def conversation_id(self) -> int | None:
        return self.chat.id if self.chat is not None else None

    def retry(self, result: AskResult) -> AskRequest:
        """The same question asked again after `result` failed: the composed prompt as it
        was stored, nothing rewound or composed again."""
        return AskRequest(
            result.prompt,
            self.images,
            self.settings,
            chat=self.chat,
            history=self.history,
            follow_up=self.follow_up,
            hints=self.hints,
            user_message_id=result.user_message_id or self.user_message_id,
            preset=self.preset,
            typed=self.typed or self.question,
            regions=self.regions,  # their sentence is in the stored prompt already
        )


@dataclass(frozen=True, eq=False)
class PrepareRequest:
    """Read `images` (and the conversation's history) before the question is sent."""

    images: tuple[QuestionImage, ...]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    conversation_id: int | None = None  # a stored chat; None: a new chat, no history yet
    follow_up: bool = False  # the service's own unsaved conversation (`desklens chat`)


@dataclass(frozen=True, eq=False)
class AskResult:
    request: AskRequest
    answer: Answer
    prompt: str  # what the model read after its history: the composed question
    user_message_id: int | None = None
    answer_message_id: int | None = None  # the stored answer (role assistant) or error
    notes: tuple[str, ...] = ()  # e.g. older turns dropped to fit
    save_error: str | None = None
    turn: Turn | None = None  # the turn this answer added to the conversation, if any
    holds: int | None = None  # the stored chat the engine's state holds now (`service.holds`)
