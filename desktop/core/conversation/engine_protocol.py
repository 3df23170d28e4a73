"""What the conversation service needs of a model. `VLMEngine` is one; a remote engine would be
another. Only the service calls `ask`, `ask_each` and `prepare` (tests/core/test_structure.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from desktop.core.chat import Answer, Conversation, GenerationSettings, ImageLike
    from desktop.core.engine.config import ModelInfo, Preparation


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
        """Forgets what the engine holds of the last conversation."""
        ...
