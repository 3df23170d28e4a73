"""Rows of the history database <-> records; the SQL that every write shares."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any, TypeVar

from desktop.core import bounded_json
from desktop.core.chat import ErrorKind, GenerationSettings
from desktop.core.history.records import (
    ROLES,
    AskedWith,
    Finish,
    HistoryError,
    Role,
    StoredImage,
    StoredMessage,
    StoredOcr,
)
from desktop.core.images import LoadedImage
from desktop.core.regions import regions_from_json, regions_to_json

MESSAGE_COLUMNS = (
    "id, conversation_id, role, text, answer_ids, stats, stopped, created_at, prompt, preset,"
    " settings, grounded, with_system, finish, error_kind, ocr_markdown, ocr_json, regions"
)
# The settings that shape an answer, stored with its question (the others are the engine's).
_STORED_SETTINGS = (
    "max_new_tokens", "temperature", "top_p", "repetition_penalty", "seed", "json_schema",
    "max_visual_tokens",
)  # fmt: skip
_Kind = TypeVar("_Kind", Finish, ErrorKind)


def message_from_row(row: tuple[Any, ...], images: list[StoredImage]) -> StoredMessage:
    (
        message_id,
        conversation_id,
        role,
        text,
        answer_ids,
        stats,
        stopped,
        created_at,
        prompt,
        preset,
        settings,
        grounded,
        with_system,
        finish,
        error_kind,
        markdown,
        ocr_json,
        regions,
    ) = row
    return StoredMessage(
        id=message_id,
        conversation_id=conversation_id,
        role=Role(role),
        text=text,
        images=images,
        answer_ids=_token_ids(bounded_json.stored(answer_ids)),
        stats=_object(bounded_json.stored(stats)),
        stopped=bool(stopped),
        created_at=created_at,
        prompt=prompt,
        asked=AskedWith(
            settings_from_json(settings),
            preset,
            bool(grounded),
            bool(with_system),
            regions_from_json(bounded_json.stored(regions)),
        ),  # fmt: skip
        finish=_member(Finish, finish),
        error_kind=_member(ErrorKind, error_kind),
        ocr=StoredOcr(markdown or "", ocr_json or "{}") if role == Role.OCR else None,
    )


def settings_to_json(settings: GenerationSettings | None) -> str | None:
    if settings is None:
        return None
    return json.dumps({name: getattr(settings, name) for name in _STORED_SETTINGS})


def settings_from_json(text: str | None) -> GenerationSettings | None:
    """The stored settings; None when there are none or they are damaged (the app's own
    settings are used then, as before schema 3)."""
    data = _object(bounded_json.stored(text))
    if data is None:
        return None
    known = {key: value for key, value in data.items() if key in _STORED_SETTINGS}
    try:
        settings = GenerationSettings(**known)
    except TypeError:
        return None
    numbers_ok = isinstance(settings.max_new_tokens, int) and isinstance(
        settings.temperature, (int, float)
    )
    schema_ok = settings.json_schema is None or isinstance(settings.json_schema, dict)
    detail_ok = settings.max_visual_tokens is None or type(settings.max_visual_tokens) is int
    return settings if numbers_ok and schema_ok and detail_ok else None


def _member(kind: type[_Kind], value: object) -> _Kind | None:
    try:
        return kind(value) if value is not None else None
    except ValueError:  # written by a newer version, or damaged: not known here
        return None


def _token_ids(value: object) -> list[int] | None:
    """Stored token ids, or None when the value is not a list of integers (damaged)."""
    if isinstance(value, list) and all(type(item) is int for item in value):
        return value
    return None


def _object(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def message_row(
    conversation_id: int,
    role: str,
    text: str,
    answer_ids: Sequence[int] | None,
    stats: dict[str, Any] | None,
    stopped: bool,
    now: float,
    *,
    prompt: str | None,
    asked: AskedWith,
    finish: Finish | None,
    error_kind: ErrorKind | None,
    ocr: StoredOcr | None,
) -> dict[str, Any]:
    """A new message's row, by column (`HistoryStore.add_message`)."""
    return {
        "conversation_id": conversation_id,
        "role": role,
        "text": text,
        "answer_ids": ids_to_json(answer_ids),
        "stats": stats_to_json(stats),
        "stopped": int(stopped or finish is Finish.STOPPED),
        "created_at": now,
        "prompt": prompt if prompt != text else None,
        "preset": asked.preset,
        "settings": settings_to_json(asked.settings),
        "grounded": int(asked.grounded),
        "with_system": int(asked.system),
        "finish": finish.value if finish is not None else None,
        "error_kind": error_kind.value if error_kind is not None else None,
        "ocr_markdown": ocr.markdown if ocr is not None else None,
        "ocr_json": ocr.json if ocr is not None else None,
        "regions": regions_to_json(asked.regions),
    }


def set_evidence(connection: sqlite3.Connection, message_id: int, evidence: str) -> bool:
    """An answer's evidence (schema 5); False when the answer is gone (rewound, deleted)."""
    cursor = connection.execute(
        "UPDATE messages SET evidence = ? WHERE id = ? AND role = ?",
        (evidence, message_id, Role.ASSISTANT.value),
    )
    return cursor.rowcount > 0


def evidence_by_message(connection: sqlite3.Connection, conversation_id: int) -> dict[int, str]:
    found = connection.execute(
        "SELECT id, evidence FROM messages WHERE conversation_id = ? AND evidence IS NOT NULL",
        (conversation_id,),
    )
    return {message_id: text for message_id, text in found}


def require_conversation(connection: sqlite3.Connection, conversation_id: int) -> None:
    exists = connection.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,))
    if exists.fetchone() is None:
        raise HistoryError("This conversation no longer exists, so the message was not saved.")


def fresh_id(connection: sqlite3.Connection, table: str) -> int:
    """An id `table` never gave before, in the open transaction. SQLite's own is the largest
    id + 1, so a deleted last row's id came back: the answer after a Regenerate took the
    dropped answer's, a chat made after a delete the deleted chat's (a late result for either
    would have found the new one). What AUTOINCREMENT does, without rebuilding old tables."""
    assert table in ("messages", "conversations")  # a fixed name, never a caller's
    (given,) = connection.execute(
        f"SELECT max(coalesce((SELECT last FROM ids_given WHERE name = ?), 0),"
        f" coalesce((SELECT max(id) FROM {table}), 0)) + 1",
        (table,),
    ).fetchone()
    connection.execute(
        "INSERT INTO ids_given (name, last) VALUES (?, ?)"
        " ON CONFLICT (name) DO UPDATE SET last = excluded.last",
        (table, given),
    )
    return int(given)


def insert_message(connection: sqlite3.Connection, row: dict[str, Any]) -> int:
    row = {"id": fresh_id(connection, "messages"), **row}
    # Column names come from the store's fixed keys, never from a caller.
    names = ", ".join(row)
    connection.execute(
        f"INSERT INTO messages ({names}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )
    return int(row["id"])


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
