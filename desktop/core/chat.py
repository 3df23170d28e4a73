"""Conversations and answers: plain data shared by the engine, the CLI, the GUI and the store."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:  # no imaging stack for plain data
    from PIL import Image

# How an answer ended: the end-of-turn token, the token budget, a stop request, or an error.
FinishReason = Literal["eos", "length", "stopped", "error"]


class ErrorKind(str, Enum):
    """Why an answer failed: the history keeps it, the API maps it to an HTTP status."""

    NO_MODEL = "no_model"  # no model loaded (or a server that cannot be reached)
    IMAGE = "image"  # an image could not be read, or the model cannot use it
    CONTEXT = "context"  # the question does not fit the model's context
    SCHEMA = "schema"  # the JSON schema asked for cannot be used
    FAILED = "failed"  # the model failed while answering (or the cause is not known)


class Unanswerable(ValueError):
    """The question cannot be answered as asked (too long for the context, an image the model
    cannot use, a schema that cannot be followed); `kind` says which, str() says it."""

    def __init__(self, message: str, kind: ErrorKind) -> None:
        super().__init__(message)
        self.kind = kind


class ImageLike(Protocol):
    """What the engine needs of an image: pixels and a content key (images.LoadedImage)."""

    @property
    def image(self) -> Image.Image: ...  # RGB, original resolution

    @property
    def digest(self) -> str: ...


@dataclass
class GenerationSettings:
    max_new_tokens: int = 1024
    temperature: float = 0.0  # 0 means greedy, what extraction wants
    top_p: float = 1.0
    repetition_penalty: float = 1.0
    seed: int | None = None
    json_schema: dict[str, Any] | None = None  # constrain the answer to JSON matching this schema
    ignore_eos: bool = False  # benchmarks: always generate max_new_tokens
    draft: bool = True  # greedy answers verify drafts from the prompt and hints (same output)
    # Leave out image blocks that repeat a neighbour pixel for pixel (engine/pruning.py);
    # None: the engine's own setting (EngineConfig.skip_repeats, on by default).
    skip_repeats: bool | None = None
    # Visual tokens per image for this request's images (more detail for small text: the
    # readability guard's remedy); None: the engine's own (EngineConfig.max_visual_tokens).
    max_visual_tokens: int | None = None


@dataclass
class AnswerStats:
    ttft_s: float = 0.0  # request received -> first token decoded
    tokens_per_s: float = 0.0  # decode speed after the first token
    input_tokens: int = 0  # tokens this turn fed to the language model (new ones only)
    context_tokens: int = 0  # tokens held in the KV state after the answer
    visual_tokens: int = 0  # visual tokens of this turn's images (kept, when pruned)
    visual_tokens_full: int = 0  # what those images cost without pruning
    vision_s: float = 0.0
    prefill_s: float = 0.0
    total_s: float = 0.0
    generated_tokens: int = 0
    images_encoded: int = 0
    images_cached: int = 0
    dropped_turns: int = 0
    drafted_tokens: int = 0  # proposed by the drafter (prompt lookup) and verified
    accepted_tokens: int = 0  # of those, what the model itself chose
    server: str = ""  # the host that answered (a model server); "" = this computer

    def to_dict(self) -> dict[str, float | int | str]:
        return asdict(self)

    def image_tokens(self) -> str:
        """ "432 of 880 image tokens kept" when repeated blocks were skipped, "880 image
        tokens" when not, "" for a turn without images."""
        if self.visual_tokens < self.visual_tokens_full:
            return f"{self.visual_tokens} of {self.visual_tokens_full} image tokens kept"
        return f"{self.visual_tokens} image tokens" if self.visual_tokens else ""

    def close(
        self, generated: int, context: int, started: float, first_token_at: float | None, now: float
    ) -> None:
        """Totals of a finished answer: time to first token and decode speed after it."""
        self.total_s = now - started
        self.generated_tokens = generated
        self.context_tokens = context
        if first_token_at is not None:
            self.ttft_s = first_token_at - started
            if generated > 1:
                self.tokens_per_s = (generated - 1) / max(now - first_token_at, 1e-9)


@dataclass
class Answer:
    text: str
    finish_reason: FinishReason
    stats: AnswerStats = field(default_factory=AnswerStats)
    error: str | None = None
    # Why a kept answer ended early through no choice of the user (a server cut it, flooded,
    # sent a malformed chunk): its words stay, and a front end says this sentence.
    cut_off: str | None = None
    error_kind: ErrorKind | None = None  # why it failed (None: not said: a plain failure)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Turn:
    question: str
    images: list[ImageLike]
    answer: str
    answer_ids: list[int]
    stopped: bool = False


@dataclass
class Conversation:
    turns: list[Turn] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "older turns were dropped to fit"

    def clear(self) -> None:
        self.turns.clear()
        self.notes.clear()
