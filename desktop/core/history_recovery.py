"""Rescuing chats from a damaged history database, and saying plainly why one cannot be opened.

When the history file is damaged, `database.open_database` moves it aside and starts a fresh
one; `recover_into` then copies every row that can still be read from the damaged copy into
the fresh one (ids kept, so images and messages stay together). SQLite reads a table through
a B-tree: a damaged page ends a full scan, but a lookup by rowid only walks the path to that
row, so after a failed scan each row is asked for by id and only the rows on damaged pages
are lost. The damaged file is never changed (opened read-only and immutable), so nothing is
lost that a specialist tool (`sqlite3 FILE .recover`) could still get back from it.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from desktop.core import bounded_json

logger = logging.getLogger(__name__)

# Table -> its columns, parents first (a message needs its conversation, an image its message).
_TABLES = {
    "conversations": ("id", "title", "created_at", "updated_at"),
    "messages": (
        "id", "conversation_id", "role", "text", "answer_ids", "stats", "stopped", "created_at",
        "typed", "prompt", "preset", "settings", "grounded", "with_system", "finish",
        "error_kind", "ocr_markdown", "ocr_json", "regions", "evidence",
    ),
    "message_images": ("message_id", "position", "digest", "name", "width", "height"),
}  # fmt: skip
_JSON_COLUMNS = ("answer_ids", "stats", "settings", "regions", "evidence")
# Rowids probed one by one after a failed scan: beyond any real history, bounded in time.
MAX_PROBED_ROWS = 200_000


@dataclass(frozen=True)
class Recovery:
    conversations: int
    messages: int
    damaged_copy: Path
    older_schema: bool = False  # the rows are as schema 1 or 2 wrote them: upgrade them

    def notice(self) -> str:
        """What the user is told (until they dismiss it)."""
        kept = f"The damaged file is kept as {self.damaged_copy}."
        if self.conversations == 0:
            return (
                "The chat history could not be read because its file is damaged, and no chats "
                f"could be recovered from it; a new, empty history was started. {kept}"
            )
        chats = "1 chat" if self.conversations == 1 else f"{self.conversations} chats"
        return (
            "The chat history file was damaged. DeskLens recovered "
            f"{chats} ({self.messages} messages) into a new history; a chat that is missing "
            f"could not be read. {kept}"
        )


def recover_into(damaged: Path, fresh: sqlite3.Connection) -> Recovery:
    """Copies what can be read from `damaged` into the empty database `fresh`; never raises
    for the damage itself (a file with nothing readable recovers nothing)."""
    counts = dict.fromkeys(_TABLES, 0)
    try:
        source = sqlite3.connect(f"{damaged.as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        logger.warning("nothing recovered from %s: %s", damaged, exc)
        return Recovery(0, 0, damaged)
    older = False
    try:
        older = "prompt" not in _present(source, "messages", ("prompt",))
        fresh.execute("BEGIN IMMEDIATE")
        for table, columns in _TABLES.items():
            counts[table] = _copy_table(source, fresh, table, columns)
        fresh.execute("COMMIT")
    except sqlite3.Error as exc:  # the fresh database itself failed: keep it empty
        logger.warning("recovering into the new history failed: %s", exc)
        fresh.execute("ROLLBACK")
        counts = dict.fromkeys(_TABLES, 0)
    finally:
        source.close()
    return Recovery(counts["conversations"], counts["messages"], damaged, older)


def open_failure(folder: Path, exc: BaseException) -> str:
    """Why the history cannot be opened, with what to do, as one sentence."""
    read_only = getattr(exc, "errno", None) in (errno.EROFS, errno.EACCES, errno.EPERM) or (
        folder.is_dir() and not os.access(folder, os.W_OK)
    )
    if read_only or "readonly" in str(exc).lower():
        return (
            f"Could not open the chat history in {folder}: the folder is read-only. Make it "
            "writable, or start DeskLens with another data folder (--data-dir DIR or the "
            "DESKLENS_DATA_DIR environment variable)."
        )
    cause = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"Could not open the chat history in {folder}: {cause.rstrip('.')}."


def _copy_table(
    source: sqlite3.Connection, fresh: sqlite3.Connection, table: str, columns: tuple[str, ...]
) -> int:
    columns = _present(source, table, columns)  # an older schema has fewer
    insert = (
        f"INSERT OR IGNORE INTO {table} ({', '.join(columns)}) "
        f"VALUES ({', '.join('?' * len(columns))})"
    )
    copied = 0
    for row in _readable_rows(source, table, columns):
        cleaned = _clean(dict(zip(columns, row, strict=True)))
        try:
            fresh.execute(insert, tuple(cleaned[column] for column in columns))
        except sqlite3.IntegrityError:
            continue  # its conversation or message was not recovered: an orphan
        copied += fresh.execute("SELECT changes()").fetchone()[0]
    return copied


def _present(source: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> tuple[str, ...]:
    try:
        found = {row[1] for row in source.execute(f"PRAGMA table_info({table})")}
    except sqlite3.Error:
        return columns  # its schema page is damaged: try them all
    return tuple(column for column in columns if column in found) if found else columns


def _readable_rows(
    source: sqlite3.Connection, table: str, columns: tuple[str, ...]
) -> Iterator[tuple]:
    """Every row of `table`: by a full scan, else (damaged pages) rowid by rowid."""
    query = f"SELECT {', '.join(columns)} FROM {table}"
    try:
        rows = source.execute(query).fetchall()
    except sqlite3.Error:
        pass
    else:
        yield from rows
        return
    for rowid in range(1, _highest_rowid(source, table) + 1):
        try:
            row = source.execute(f"{query} WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.Error:
            continue  # on a damaged page
        if row is not None:
            yield row


def _highest_rowid(source: sqlite3.Connection, table: str) -> int:
    try:
        highest = source.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        highest = None  # the rightmost page is damaged too: probe the whole range
    return min(int(highest or MAX_PROBED_ROWS), MAX_PROBED_ROWS)


def _clean(row: dict) -> dict:
    """Damaged JSON in a recovered message is dropped (the message itself is kept)."""
    for column in _JSON_COLUMNS:
        value = row.get(column)
        if value is None:
            continue
        try:
            bounded_json.loads(value)
        except (ValueError, TypeError):
            row[column] = None
    return row
