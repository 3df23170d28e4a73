"""Opening the history's SQLite file: schema, version check, and a damaged file moved aside."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.history.migration import SCHEMA_VERSION, migrate, upgrade_rows
from desktop.core.history.records import DATABASE_NAME, HistoryError
from desktop.core.history_recovery import open_failure, recover_into

__all__ = ["SCHEMA_VERSION", "OpenedDatabase", "column", "open_database"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    text TEXT NOT NULL,          -- a question: the words the user typed
    answer_ids TEXT,             -- JSON list of generated token ids, or NULL
    stats TEXT,                  -- JSON object, or NULL
    stopped INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    typed TEXT,                  -- schema 2 only (moved into `text`); NULL since schema 3
    prompt TEXT,                 -- a question's composed prompt, when it is not just `text`
    preset TEXT,                 -- the key of the preset a question was asked with
    settings TEXT,               -- JSON: the question's generation settings
    grounded INTEGER NOT NULL DEFAULT 0,     -- the images' OCR text was put before it
    with_system INTEGER NOT NULL DEFAULT 0,  -- the system prompt was put before it
    finish TEXT,                 -- an answer: done | length | stopped
    error_kind TEXT,             -- an error: desktop.core.history.records.ErrorKind
    ocr_markdown TEXT,           -- an extraction's Markdown
    ocr_json TEXT,               -- an extraction's JSON
    regions TEXT,                -- JSON: the boxes a question was about (regions.py)
    evidence TEXT                -- JSON: the OCR lines an answer quotes (core/evidence.py)
);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages(conversation_id, id);
CREATE TABLE IF NOT EXISTS message_images (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    digest TEXT NOT NULL,
    name TEXT NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    PRIMARY KEY (message_id, position)
);
CREATE INDEX IF NOT EXISTS message_images_by_digest ON message_images(digest);
CREATE TABLE IF NOT EXISTS ids_given (  -- the last id each table gave (rows.fresh_id)
    name TEXT PRIMARY KEY,
    last INTEGER NOT NULL
);
"""

logger = logging.getLogger(__name__)


@dataclass
class OpenedDatabase:
    connection: sqlite3.Connection
    recovered_from: Path | None = None  # where a damaged database was moved
    notice: str | None = None  # what to tell the user about it


def open_database(database_path: Path) -> OpenedDatabase:
    """Opens (or creates) the database; a damaged file is moved aside and a new one started."""
    folder = database_path.parent
    try:
        try:
            return OpenedDatabase(_connect(database_path))
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            logger.warning("history database %s is corrupt: %s", database_path, exc)
        moved = _move_corrupt_database_aside(database_path)
        connection = _connect(database_path)
        recovery = recover_into(moved, connection)
        if recovery.older_schema:  # its rows are as schema 1 or 2 wrote them
            connection.execute("BEGIN IMMEDIATE")
            upgrade_rows(connection)
            connection.execute("COMMIT")
        return OpenedDatabase(connection, moved, recovery.notice())
    except (sqlite3.Error, OSError) as exc:
        raise HistoryError(open_failure(folder, exc)) from exc


def column(connection: sqlite3.Connection, query: str, parameters: tuple[Any, ...]) -> list[Any]:
    return [row[0] for row in connection.execute(query, parameters)]


def _connect(database_path: Path) -> sqlite3.Connection:
    # Autocommit mode (isolation_level=None): transactions are opened explicitly.
    connection = sqlite3.connect(
        database_path, check_same_thread=False, isolation_level=None, timeout=10
    )
    try:
        version = _refuse_newer_schema(connection, database_path.parent)  # before any change
        connection.execute("PRAGMA journal_mode = WAL")
        # A few commits per answer: syncing each one is cheap and survives power cuts.
        connection.execute("PRAGMA synchronous = FULL")
        connection.execute("PRAGMA foreign_keys = ON")
        problems = column(connection, "PRAGMA quick_check", ())
        if problems != ["ok"]:
            raise sqlite3.DatabaseError(f"integrity check failed: {problems[:3]}")
        connection.executescript(f"BEGIN IMMEDIATE; {_SCHEMA}")
        try:
            migrate(connection, version)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
        connection.create_function("contains_text", 2, _contains_text, deterministic=True)
    except BaseException:
        connection.close()
        raise
    return connection


def _refuse_newer_schema(connection: sqlite3.Connection, folder: Path) -> int:
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise HistoryError(
            f"The chat history in {folder} was written by a newer version of "
            "DeskLens; please update DeskLens to open it."
        )
    return version


def _move_corrupt_database_aside(database_path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = database_path.with_name(f"{DATABASE_NAME}.corrupt-{stamp}")
    attempt = 1
    while target.exists():
        attempt += 1
        target = target.with_name(f"{DATABASE_NAME}.corrupt-{stamp}-{attempt}")
    # The WAL and shared-memory files belong to the damaged database: keep them with it.
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{database_path}{suffix}")
        if source.exists():
            os.replace(source, f"{target}{suffix}")
    return target


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    # "file is not a database" and "database disk image is malformed" raise the base class;
    # subclasses mean something else (locked, read-only, full: OperationalError).
    return type(exc) is sqlite3.DatabaseError


def _contains_text(haystack: str | None, casefolded_needle: str) -> bool:
    return haystack is not None and casefolded_needle in haystack.casefold()
