"""What the history stores and returns: records, limits, and the one-line text helpers."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from desktop.core.chat import ErrorKind, GenerationSettings
from desktop.core.regions import Region

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


class Finish(str, Enum):
    """How a stored answer ended."""

    DONE = "done"  # the model ended it
    LENGTH = "length"  # the answer length ran out: it may be cut short
    STOPPED = "stopped"  # the user stopped it


@dataclass(frozen=True)
class AskedWith:
    """How a question was asked, stored with it so Retry, Regenerate and Edit ask it the same
    way after a restart (a JSON preset's answer stays JSON)."""

    settings: GenerationSettings | None = None  # None: not known (stored before schema 3)
    preset: str | None = None  # the preset's key, for a preset's question
    grounded: bool = False  # the fast-OCR text of its images was put before it
    system: bool = False  # the user's system prompt was put before it (a chat's first)
    regions: tuple[Region, ...] = ()  # the boxes it was about (schema 4): of its images

    @property
    def label(self) -> str:
        """What was put before the typed words, said for the question's bubble."""
        if self.grounded and self.system:
            return "With your system prompt and the extracted text"
        if self.grounded:
            return "With the extracted text"
        return "With your system prompt" if self.system else ""


@dataclass(frozen=True)
class StoredOcr:
    """An extraction's other formats (schema 3 keeps them in their own columns)."""

    markdown: str
    json: str  # the OcrResult as JSON text


@dataclass(frozen=True)
class StoredMessage:
    id: int
    conversation_id: int
    role: Role
    text: str  # a question's typed words; an answer's, an error's, an extraction's text
    images: list[StoredImage]
    answer_ids: list[int] | None
    stats: dict[str, Any] | None
    stopped: bool
    created_at: float
    prompt: str | None = None  # a question's composed prompt, when it is not just `text`
    asked: AskedWith = AskedWith()
    finish: Finish | None = None  # an answer's end (None: stored before schema 3)
    error_kind: ErrorKind | None = None  # an error's kind
    ocr: StoredOcr | None = None  # an extraction's Markdown and JSON

    @property
    def model_text(self) -> str:
        """What the model read for this message: a question's composed prompt."""
        return self.prompt if self.prompt is not None else self.text


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


def marked(text: str, role_and_finish: str) -> str:
    """A chat's preview says when its last answer failed, was stopped or cut short
    (`role_and_finish`: the last message's role and finish, space-separated)."""
    return f"{_PREVIEW_MARKS.get(role_and_finish, '')}{text}"


_PREVIEW_MARKS = {
    f"{Role.ERROR.value} ": "Failed: ",
    f"{Role.ASSISTANT.value} {Finish.STOPPED.value}": "Stopped: ",
    f"{Role.ASSISTANT.value} {Finish.LENGTH.value}": "Cut short: ",
}


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
