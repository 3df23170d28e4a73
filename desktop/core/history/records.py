"""What the history stores and returns: records, limits, and the one-line text helpers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATABASE_NAME = "history.sqlite3"
IMAGES_FOLDER = "images"
DEFAULT_TITLE = "New chat"
ROLES = frozenset({"user", "assistant", "ocr", "error", "note"})
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
    stats: dict | None
    stopped: bool
    created_at: float


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
