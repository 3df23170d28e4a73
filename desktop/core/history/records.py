"""What the history stores and returns: records, limits, and the one-line text helpers."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

DATABASE_NAME = "history.sqlite3"
IMAGES_FOLDER = "images"
DEFAULT_TITLE = "New chat"


class Role(str, Enum):
    """Who a stored message is from. A str: rows and comparisons keep the plain names."""

    USER = "user"  # a question (its images attached)
    ASSISTANT = "assistant"  # the model's answer (with its token ids and stats)
    OCR = "ocr"  # an extraction by the fast OCR
    ERROR = "error"  # an answer that failed, said as a sentence
    NOTE = "note"  # e.g. older turns were dropped to fit


ROLES = frozenset(role.value for role in Role)
PREVIEW_CHARS = 80
TITLE_CHARS = 48  # a chat's automatic title: the start of its first question


class HistoryError(Exception):
    """The history could not be read or saved; str(error) is a user-facing sentence."""


@dataclass(frozen=True)
class StoredImage:
    digest: str
    path: Path
    name: str
    width: int
    height: int


@dataclass(frozen=True)
class StoredMessage:
    id: int
    conversation_id: int
    role: str
    text: str
    images: list[StoredImage]
    answer_ids: list[int] | None
    stats: dict[str, Any] | None
    stopped: bool
    created_at: float
    typed: str | None = None  # a question's typed words when `text` is the composed prompt

    @property
    def typed_text(self) -> str:
        """The words the user typed: `typed` (schema 2), or read back out of a composed prompt
        stored before it existed."""
        if self.typed is not None:
            return self.typed
        from desktop.core.question_context import typed_question

        return typed_question(self.text)


@dataclass(frozen=True)
class ConversationSummary:
    id: int
    title: str
    created_at: float
    updated_at: float
    message_count: int
    preview: str  # the latest message's text, on one line, shortened


def one_line(text: str, limit: int) -> str:
    """`text` on one line, shortened to `limit` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def clean_title(title: str) -> str:
    return " ".join(title.split()) or DEFAULT_TITLE


def title_from(text: str) -> str:
    """A new chat's title from its first question (or first image's name)."""
    return one_line(text, TITLE_CHARS)


def reason(exc: BaseException) -> str:
    """An error's cause as the end of a sentence: "No space left on device"."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.rstrip(".")
    return str(exc).rstrip(".") or type(exc).__name__
