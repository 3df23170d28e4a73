"""Requests and results of the conversation service: frozen, so they can cross threads. A
request's cancellation is a separate `threading.Event` handed in beside it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeAlias

from desktop.core.chat import Answer, GenerationSettings, Turn
from desktop.core.regions import check_region_count

if TYPE_CHECKING:
    from desktop.core.history.handle import ChatHandle
    from desktop.core.images import LoadedImage
    from desktop.core.ocr import OcrEngine, OcrResult
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
class StoredChat:
    """A stored chat: created if new, replayed from the store, the question and its answer
    saved. Only here can a question be stored already (a retry) or replace stored messages."""

    chat: ChatHandle
    user_message_id: int | None = None  # a retry: the question is stored already
    # Regenerate/edit: the stored messages the user saw go (the one replaced and those after
    # it), by id: a message stored meanwhile (an extraction that finished) is not among them.
    drops: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        kept = self.user_message_id
        if kept is not None and kept in self.drops:
            raise ValueError(
                f"A question asked again as stored message {kept} cannot drop that message: "
                "that would delete the question itself."
            )


@dataclass(frozen=True, eq=False)
class GivenTurns:
    """The earlier turns, given by the caller (the API): answered beside the service's own
    conversation, nothing stored."""

    turns: tuple[Turn, ...] = ()


@dataclass(frozen=True)
class FollowUp:
    """The service's own unsaved conversation goes on (`desklens chat`)."""


@dataclass(frozen=True)
class OneShot:
    """A new conversation of one turn, not stored (`desklens ask`, `ocr --refine`)."""


Where: TypeAlias = StoredChat | GivenTurns | FollowUp | OneShot


@dataclass(frozen=True)
class NoContext:
    """Nothing is put before the question but the system prompt, if any."""


@dataclass(frozen=True, eq=False)
class Ground:
    """The service runs the fast OCR (this factory's engine) on the question's images and
    puts its text before the question ("Use the extracted text"); it also drafts."""

    ocr: Callable[[], OcrEngine]


@dataclass(frozen=True)
class GroundTexts:
    """Grounding already read by the caller (the CLI's OCR results), one text per image."""

    texts: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.texts:
            raise ValueError("GroundTexts needs at least one text; ask with NoContext instead.")


Context: TypeAlias = NoContext | Ground | GroundTexts


@dataclass(frozen=True)
class KnownRead:
    """A fast-OCR read the caller has already, of the picture `digest`: the result (the app's
    readability guard read it) or its stored JSON (the app's "Extract text"). The service
    grounds and drafts from it instead of reading the picture again."""

    digest: str
    read: OcrResult | str


@dataclass(frozen=True, eq=False)
class AskRequest:
    """One question: where it belongs (`where`) and what goes before it (`context`, then
    `system`), each one value, so no two of them can disagree."""

    question: str  # as typed; or the whole composed prompt (a retry of a stored question)
    images: tuple[QuestionImage, ...] = ()
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    where: Where = field(default_factory=OneShot)
    hints: tuple[str, ...] = ()  # texts the answer is likely to copy (fast OCR): drafts
    # Put before the question once, by the service; the composed prompt is what is stored
    # and what `AskResult.prompt` says.
    context: Context = field(default_factory=NoContext)
    system: str = ""  # a new chat's system prompt
    preset: str | None = None  # the key of the preset asked with: stored with the question
    typed: str | None = None  # the typed words when `question` is a stored composed prompt
    # Boxes the question is about: their bbox_2d goes before it and their crops after the
    # images (regions.py); stored with the question.
    regions: tuple[Region, ...] = ()
    known_reads: tuple[KnownRead, ...] = ()  # its pictures' OCR the caller has read already

    def __post_init__(self) -> None:
        if isinstance(self.context, Ground) and not self.images:
            raise ValueError("A question grounded in its images' text needs images.")
        check_region_count(self.regions, len(self.images))  # RegionError is a ValueError

    @property
    def chat(self) -> ChatHandle | None:
        """The stored chat the question belongs to, if any."""
        return self.where.chat if isinstance(self.where, StoredChat) else None

    @property
    def conversation_id(self) -> int | None:
        return self.chat.id if self.chat is not None else None

    @property
    def grounded(self) -> bool:
        return not isinstance(self.context, NoContext)

    def retry(self, result: AskResult) -> AskRequest:
        """The same question asked again after `result` failed: the composed prompt as it
        was stored (its context and system prompt are in it), nothing rewound."""
        where = self.where
        if isinstance(where, StoredChat):
            where = StoredChat(where.chat, result.user_message_id or where.user_message_id)
        return AskRequest(
            result.prompt,
            self.images,
            self.settings,
            where,
            hints=self.hints,
            preset=self.preset,
            typed=self.typed or self.question,
            regions=self.regions,  # their sentence is in the stored prompt already
            known_reads=self.known_reads,
        )


@dataclass(frozen=True, eq=False)
class PrepareRequest:
    """Read `images` (and the conversation's history) before the question is sent."""

    images: tuple[QuestionImage, ...]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    conversation_id: int | None = None  # a stored chat; None: a new chat, no history yet
    follow_up: bool = False  # the service's own unsaved conversation (`desklens chat`)

    def __post_init__(self) -> None:
        if self.follow_up and self.conversation_id is not None:
            raise ValueError(
                "A read-ahead is for a stored chat or for the unsaved follow-up conversation, "
                "not both."
            )


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
    # The fast OCR of each of the question's images as the service knew it (grounded, given
    # in `known_reads` or read earlier this session); None: not read. Where an answer's
    # evidence is looked for.
    reads: tuple[OcrResult | None, ...] = ()
