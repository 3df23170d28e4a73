"""Rows of the history database <-> records; the SQL that every write shares."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from desktop.core import bounded_json
from desktop.core.history.records import ROLES, HistoryError, StoredImage, StoredMessage
from desktop.core.images import LoadedImage

MESSAGE_COLUMNS = "id, conversation_id, role, text, answer_ids, stats, stopped, created_at, typed"


def message_from_row(row: tuple[Any, ...], images: list[StoredImage]) -> StoredMessage:
    message_id, conversation_id, role, text, answer_ids, stats, stopped, created_at, typed = row
    return StoredMessage(
        id=message_id,
        conversation_id=conversation_id,
        role=role,
        text=text,
        images=images,
        answer_ids=_token_ids(bounded_json.stored(answer_ids)),
        stats=_object(bounded_json.stored(stats)),
        stopped=bool(stopped),
        created_at=created_at,
        typed=typed,
    )


def _token_ids(value: object) -> list[int] | None:
    """Stored token ids, or None when the value is not a list of integers (damaged)."""
    if isinstance(value, list) and all(type(item) is int for item in value):
        return value
    return None


def _object(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def require_conversation(connection: sqlite3.Connection, conversation_id: int) -> None:
    exists = connection.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,))
    if exists.fetchone() is None:
        raise HistoryError("This conversation no longer exists, so the message was not saved.")


def insert_message(connection: sqlite3.Connection, row: tuple[Any, ...]) -> int:
    cursor = connection.execute(
        "INSERT INTO messages (conversation_id, role, text, answer_ids, stats, stopped,"
        " created_at, typed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        row,
    )
    assert cursor.lastrowid is not None  # an INSERT sets it
    return cursor.lastrowid


def insert_image_reference(
    connection: sqlite3.Connection, message_id: int, position: int, image: LoadedImage
) -> None:
    connection.execute(
        "INSERT INTO message_images (message_id, position, digest, name, width, height)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (message_id, position, image.digest, image.name, *image.size),
    )


def touch(connection: sqlite3.Connection, conversation_id: int, now: float) -> None:
    connection.execute(
        "UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id)
    )


def check_role(role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"unknown message role {role!r}; expected one of {sorted(ROLES)}")


def ids_to_json(answer_ids: Sequence[int] | None) -> str | None:
    # int() also accepts numpy integers, which json cannot serialise.
    return None if answer_ids is None else json.dumps([int(token) for token in answer_ids])


def stats_to_json(stats: dict[str, Any] | None) -> str | None:
    return None if stats is None else json.dumps(stats, default=_plain_number)


def _plain_number(value: object) -> float | int:
    # numpy scalars (e.g. timings computed with numpy) expose .item() -> int | float.
    item = getattr(value, "item", None)
    plain = item() if callable(item) else None
    if isinstance(plain, (int, float)):
        return plain
    raise TypeError(f"cannot store {type(value).__name__} in message stats")
