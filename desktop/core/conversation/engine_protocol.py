"""What the conversation service needs of a model, and what a model reports (`ModelInfo`,
`Preparation`). `VLMEngine` is one; `RemoteEngine` (a model server) is another. Only the
service calls `ask`, `ask_each` and `prepare` (tests/core/test_structure.py). Light to import:
a remote engine must not load OpenVINO."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from desktop.core.chat import AnswerStats

if TYPE_CHECKING:
    from desktop.core.chat import Answer, Conversation, GenerationSettings, ImageLike
    from desktop.core.engine.vision import VisionSpec
    from desktop.core.manifest import Manifest


@dataclass
class ModelInfo:
    """The model answering: a local folder (folder and manifest set), or a server's model
    (`server` = its host; no folder, no manifest)."""

    name: str
    folder: Path | None
    device: str
    weight_format: str
    manifest: Manifest | None
    server: str = ""
    # How this computer's model resizes images (its budget as loaded); None for a server's.
    vision: VisionSpec | None = None
    # The precisions measured as fastest on this CPU (engine/tuning.py); "" where none were.
    precisions: str = ""


@dataclass
class Preparation:
    """What `VLMEngine.prepare` did: "ready" (the prefix is held), "cancelled" (part of it is)
    or "error" (nothing kept; the question's own `ask` reports the problem again)."""

    status: str
    stats: AnswerStats = field(default_factory=AnswerStats)  # vision_s, prefill_s, input_tokens
    held_tokens: int = 0  # positions the KV state holds afterwards
    error: str | None = None


class Lane(Enum):
    """Whose KV state an engine call reads and keeps. The service's own conversation (the
    window's chat, `desklens chat`'s, a one-shot question) and the turns a caller gives (an
    API request) each have their own, so a request of the one never takes the state of the
    other out of the engine."""

    OWN = "own"
    GIVEN = "given"


class AnswerEngine(Protocol):
    @property
    def info(self) -> ModelInfo: ...

    def ask(
        self,
        conversation: Conversation,
        question: str,
        images: Sequence[ImageLike] = (),
        settings: GenerationSettings | None = None,
        on_text: Callable[[str], None] | None = None,
        hints: Sequence[str] = (),
    ) -> Answer:
        """Answers in `conversation` (appending the turn), streaming text to `on_text`."""
        ...

    def ask_each(
        self,
        requests: Sequence[tuple[str, Sequence[ImageLike]]],
        settings: GenerationSettings | None = None,
    ) -> list[Answer]:
        """One answer per (question, images), each in a conversation of its own."""
        ...

    def prepare(
        self,
        conversation: Conversation,
        images: Sequence[ImageLike] = (),
        settings: GenerationSettings | None = None,
        cancel: threading.Event | None = None,
    ) -> Preparation:
        """The work of the next `ask` that does not depend on its question (read ahead)."""
        ...

    def stop(self) -> None:
        """Any thread: ends the current answer at its next token."""
        ...

    def reset(self) -> None:
        """Forgets what the engine holds of the last conversation (in the current lane)."""
        ...

    def use_lane(self, lane: Lane) -> None:
        """The calls from now on read and keep `lane`'s KV state; the other lane's stays."""
        ...
