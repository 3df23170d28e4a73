"""Conversation history: SQLite (WAL) for the text, a content-addressed folder for the images.

Layout under the store's folder:
    history.sqlite3                      conversations, messages, message_images
    images/<first 2 hex>/<digest>.png    each distinct picture once, named by its digest

File paths come from digests only, never from image names, so no name can make the store
write outside its folder. Every write is one committed transaction; a failed write rolls
back and raises `HistoryError`, leaving earlier data as it was.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.core.images import LoadedImage, load_image

DATABASE_NAME = "history.sqlite3"
IMAGES_FOLDER = "images"
DEFAULT_TITLE = "New chat"
ROLES = frozenset({"user", "assistant", "ocr", "error", "note"})
PREVIEW_CHARS = 80

_SCHEMA_VERSION = 1
_TEMP_SUFFIX = ".partial"
_STALE_TEMP_SECONDS = 3600  # older partial files are leftovers of a crash, not a write in flight
_DIGEST = re.compile(r"[0-9a-f]{64}")

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
    text TEXT NOT NULL,
    answer_ids TEXT,             -- JSON list of generated token ids, or NULL
    stats TEXT,                  -- JSON object, or NULL
    stopped INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
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
"""

_MESSAGE_COLUMNS = "id, conversation_id, role, text, answer_ids, stats, stopped, created_at"

logger = logging.getLogger(__name__)


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


class HistoryStore:
    """The GUI's conversation store. All methods are serialised by one lock, so a worker
    thread may use the store too."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.database_path = self.folder / DATABASE_NAME
        self.images_folder = self.folder / IMAGES_FOLDER
        self.recovered_from: Path | None = None
        self.notice: str | None = None
        self._lock = threading.RLock()
        try:
            self.images_folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistoryError(
                f"Could not create the chat history folder {self.folder}: {_reason(exc)}."
            ) from exc
        self._connection = self._open()
        self._remove_stale_partial_files()

    # --- conversations ---------------------------------------------------------------------

    def create_conversation(self, title: str = DEFAULT_TITLE) -> int:
        now = time.time()
        with self._transaction() as connection:
            cursor = connection.execute(
                "INSERT INTO conversations (title, created_at, updated_at) VALUES (?, ?, ?)",
                (_clean_title(title), now, now),
            )
        return int(cursor.lastrowid)

    def rename_conversation(self, conversation_id: int, title: str) -> bool:
        """Returns False when the conversation no longer exists."""
        with self._transaction() as connection:
            cursor = connection.execute(
                "UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?",
                (_clean_title(title), time.time(), conversation_id),
            )
        return cursor.rowcount > 0

    def delete_conversation(self, conversation_id: int) -> bool:
        """Deletes the conversation, its messages and the images no other message uses.
        Returns False when it no longer exists."""
        with self._lock:
            with self._transaction() as connection:
                digests = _column(
                    connection,
                    "SELECT DISTINCT i.digest FROM message_images i"
                    " JOIN messages m ON m.id = i.message_id WHERE m.conversation_id = ?",
                    (conversation_id,),
                )
                cursor = connection.execute(
                    "DELETE FROM conversations WHERE id = ?", (conversation_id,)
                )
            self._remove_unreferenced_images(digests)
        return cursor.rowcount > 0

    def list_conversations(self, search: str | None = None) -> list[ConversationSummary]:
        """Newest first. `search` matches titles and message texts, ignoring case."""
        needle = search.strip() if search else ""
        query = """
            SELECT c.id, c.title, c.created_at, c.updated_at,
                   (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id),
                   (SELECT m.text FROM messages m WHERE m.conversation_id = c.id
                    ORDER BY m.id DESC LIMIT 1)
            FROM conversations c
            WHERE :needle = ''
               OR contains_text(c.title, :needle)
               OR EXISTS (SELECT 1 FROM messages m
                          WHERE m.conversation_id = c.id AND contains_text(m.text, :needle))
            ORDER BY c.updated_at DESC, c.id DESC
        """
        with self._reading() as connection:
            rows = connection.execute(query, {"needle": needle.casefold()}).fetchall()
        return [
            ConversationSummary(
                id=row[0],
                title=row[1],
                created_at=row[2],
                updated_at=row[3],
                message_count=row[4],
                preview=_preview(row[5] or ""),
            )
            for row in rows
        ]

    # --- messages --------------------------------------------------------------------------

    def add_message(
        self,
        conversation_id: int,
        role: str,
        text: str,
        images: Sequence[LoadedImage] = (),
        answer_ids: Sequence[int] | None = None,
        stats: dict | None = None,
        stopped: bool = False,
    ) -> StoredMessage:
        """Stores a message and copies its images into the store, in one transaction."""
        _check_role(role)
        for image in images:
            _check_digest(image.digest)
        now = time.time()
        row = (
            conversation_id,
            role,
            text,
            _ids_to_json(answer_ids),
            _stats_to_json(stats),
            int(stopped),
            now,
        )
        written: list[Path] = []
        with self._lock:
            try:
                with self._transaction() as connection:
                    _require_conversation(connection, conversation_id)
                    message_id = _insert_message(connection, row)
                    for position, image in enumerate(images):
                        _insert_image_reference(connection, message_id, position, image)
                        if self._write_image_file(image):
                            written.append(self._image_path(image.digest))
                    _touch(connection, conversation_id, now)
                    message = self._fetch_message(connection, message_id)
            except BaseException:
                # The rows were rolled back, so files this call created are referenced by none.
                _unlink_quietly(written)
                raise
        assert message is not None  # inserted by this very transaction
        return message

    def update_message(
        self,
        message_id: int,
        *,
        text: str | None = None,
        answer_ids: Sequence[int] | None = None,
        stats: dict | None = None,
        stopped: bool | None = None,
    ) -> StoredMessage | None:
        """Changes the given fields (None leaves one as it is). Returns the updated message,
        or None when it no longer exists (e.g. its conversation was deleted meanwhile)."""
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = text
        if answer_ids is not None:
            changes["answer_ids"] = _ids_to_json(answer_ids)
        if stats is not None:
            changes["stats"] = _stats_to_json(stats)
        if stopped is not None:
            changes["stopped"] = int(stopped)
        with self._transaction() as connection:
            if changes:
                # Column names come from the fixed keys above, never from the caller.
                assignments = ", ".join(f"{column} = ?" for column in changes)
                connection.execute(
                    f"UPDATE messages SET {assignments} WHERE id = ?",
                    (*changes.values(), message_id),
                )
            message = self._fetch_message(connection, message_id)
            if message is not None and changes:
                _touch(connection, message.conversation_id, time.time())
        return message

    def delete_message(self, message_id: int) -> bool:
        """Deletes one message and the images no other message uses. Returns False when it
        no longer exists."""
        with self._lock:
            with self._transaction() as connection:
                digests = _column(
                    connection,
                    "SELECT digest FROM message_images WHERE message_id = ?",
                    (message_id,),
                )
                row = connection.execute(
                    "SELECT conversation_id FROM messages WHERE id = ?", (message_id,)
                ).fetchone()
                if row is not None:
                    connection.execute("DELETE FROM messages WHERE id = ?", (message_id,))
                    _touch(connection, row[0], time.time())
            self._remove_unreferenced_images(digests)
        return row is not None

    def messages(self, conversation_id: int) -> list[StoredMessage]:
        """The conversation's messages, oldest first."""
        with self._reading() as connection:
            rows = connection.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ? ORDER BY id",
                (conversation_id,),
            ).fetchall()
            images = self._images_by_message(
                connection,
                "SELECT i.message_id, i.digest, i.name, i.width, i.height"
                " FROM message_images i JOIN messages m ON m.id = i.message_id"
                " WHERE m.conversation_id = ? ORDER BY i.message_id, i.position",
                (conversation_id,),
            )
        return [_message_from_row(row, images.get(row[0], [])) for row in rows]

    def load_image(self, stored: StoredImage) -> LoadedImage:
        """Reads a stored image back; raises `ImageError` if its file is gone or damaged."""
        return load_image(stored.path, name=stored.name)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- opening and recovery --------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        try:
            try:
                return self._connect()
            except sqlite3.DatabaseError as exc:
                if not _is_corruption(exc):
                    raise
                logger.warning("history database %s is corrupt: %s", self.database_path, exc)
            self.recovered_from = self._move_corrupt_database_aside()
            self.notice = (
                "The chat history could not be read because its file is damaged. It was "
                f"moved to {self.recovered_from.name} and a new, empty history was started."
            )
            return self._connect()
        except (sqlite3.Error, OSError) as exc:
            raise HistoryError(
                f"Could not open the chat history in {self.folder}: {_reason(exc)}."
            ) from exc

    def _connect(self) -> sqlite3.Connection:
        # Autocommit mode (isolation_level=None): transactions are opened explicitly.
        connection = sqlite3.connect(
            self.database_path, check_same_thread=False, isolation_level=None, timeout=10
        )
        try:
            self._refuse_newer_schema(connection)  # before anything changes the file
            connection.execute("PRAGMA journal_mode = WAL")
            # A few commits per answer: syncing each one is cheap and survives power cuts.
            connection.execute("PRAGMA synchronous = FULL")
            connection.execute("PRAGMA foreign_keys = ON")
            problems = _column(connection, "PRAGMA quick_check", ())
            if problems != ["ok"]:
                raise sqlite3.DatabaseError(f"integrity check failed: {problems[:3]}")
            self._create_schema(connection)
            connection.create_function("contains_text", 2, _contains_text, deterministic=True)
        except BaseException:
            connection.close()
            raise
        return connection

    def _refuse_newer_schema(self, connection: sqlite3.Connection) -> None:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version > _SCHEMA_VERSION:
            raise HistoryError(
                f"The chat history in {self.folder} was written by a newer version of "
                "DeskLens; please update DeskLens to open it."
            )

    @staticmethod
    def _create_schema(connection: sqlite3.Connection) -> None:
        connection.executescript(
            f"BEGIN IMMEDIATE; {_SCHEMA} PRAGMA user_version = {_SCHEMA_VERSION}; COMMIT;"
        )

    def _move_corrupt_database_aside(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.database_path.with_name(f"{DATABASE_NAME}.corrupt-{stamp}")
        attempt = 1
        while target.exists():
            attempt += 1
            target = target.with_name(f"{DATABASE_NAME}.corrupt-{stamp}-{attempt}")
        # The WAL and shared-memory files belong to the damaged database: keep them with it.
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.database_path}{suffix}")
            if source.exists():
                os.replace(source, f"{target}{suffix}")
        return target

    # --- transactions ----------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One committed write; any failure rolls it back. SQLite and file-system errors
        (disk full, read-only, I/O error) become a `HistoryError`."""
        with self._lock:
            try:
                self._connection.execute("BEGIN IMMEDIATE")
                yield self._connection
                self._connection.execute("COMMIT")
            except BaseException as exc:
                self._rollback_quietly()
                if isinstance(exc, (sqlite3.Error, OSError)):
                    raise HistoryError(
                        f"Could not save to the chat history: {_reason(exc)}. Check that the "
                        f"disk has free space and that {self.folder} is writable; "
                        "earlier messages are kept."
                    ) from exc
                raise

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._connection
            except sqlite3.Error as exc:
                raise HistoryError(f"Could not read the chat history: {_reason(exc)}.") from exc

    def _rollback_quietly(self) -> None:
        # SQLite may already have rolled back by itself (e.g. after a full disk).
        try:
            if self._connection.in_transaction:
                self._connection.execute("ROLLBACK")
        except sqlite3.Error:
            logger.exception("rolling back the history transaction failed")

    # --- rows ------------------------------------------------------------------------------

    def _fetch_message(
        self, connection: sqlite3.Connection, message_id: int
    ) -> StoredMessage | None:
        row = connection.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
        if row is None:
            return None
        images = self._images_by_message(
            connection,
            "SELECT message_id, digest, name, width, height FROM message_images"
            " WHERE message_id = ? ORDER BY position",
            (message_id,),
        )
        return _message_from_row(row, images.get(message_id, []))

    def _images_by_message(
        self, connection: sqlite3.Connection, query: str, parameters: tuple
    ) -> dict[int, list[StoredImage]]:
        grouped: dict[int, list[StoredImage]] = {}
        for message_id, digest, name, width, height in connection.execute(query, parameters):
            stored = StoredImage(digest, self._image_path(digest), name, width, height)
            grouped.setdefault(message_id, []).append(stored)
        return grouped

    # --- image files -----------------------------------------------------------------------

    def _image_path(self, digest: str) -> Path:
        _check_digest(digest)
        return self.images_folder / digest[:2] / f"{digest}.png"

    def _write_image_file(self, image: LoadedImage) -> bool:
        """Writes the image unless the store has it already; True when a file was created.
        Written to a temporary file first, so a crash never leaves a half image."""
        path = self._image_path(image.digest)
        if path.exists():
            return False
        path.parent.mkdir(exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=_TEMP_SUFFIX)
        try:
            with os.fdopen(handle, "wb") as file:
                image.image.save(file, format="PNG")
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            _unlink_quietly([Path(temporary)])
            raise
        return True

    def _remove_unreferenced_images(self, digests: list[str]) -> None:
        # Runs after the deleting transaction committed: a crash in between leaves an unused
        # file behind, never a message whose image is missing. The deletion itself succeeded,
        # so a failure here is only logged.
        query = "SELECT 1 FROM message_images WHERE digest = ? LIMIT 1"
        try:
            unused = [
                digest
                for digest in digests
                if _DIGEST.fullmatch(digest)
                and self._connection.execute(query, (digest,)).fetchone() is None
            ]
        except sqlite3.Error:
            logger.exception("could not look for unused images in the history")
            return
        _unlink_quietly([self._image_path(digest) for digest in unused])

    def _remove_stale_partial_files(self) -> None:
        cutoff = time.time() - _STALE_TEMP_SECONDS
        for partial in self.images_folder.glob(f"*/.*{_TEMP_SUFFIX}"):
            try:
                if partial.stat().st_mtime < cutoff:
                    partial.unlink()
            except OSError:
                logger.warning("could not remove the partial image %s", partial)


# --- helpers -------------------------------------------------------------------------------


def _message_from_row(row: tuple, images: list[StoredImage]) -> StoredMessage:
    message_id, conversation_id, role, text, answer_ids, stats, stopped, created_at = row
    return StoredMessage(
        id=message_id,
        conversation_id=conversation_id,
        role=role,
        text=text,
        images=images,
        answer_ids=json.loads(answer_ids) if answer_ids is not None else None,
        stats=json.loads(stats) if stats is not None else None,
        stopped=bool(stopped),
        created_at=created_at,
    )


def _require_conversation(connection: sqlite3.Connection, conversation_id: int) -> None:
    exists = connection.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,))
    if exists.fetchone() is None:
        raise HistoryError("This conversation no longer exists, so the message was not saved.")


def _insert_message(connection: sqlite3.Connection, row: tuple) -> int:
    cursor = connection.execute(
        "INSERT INTO messages (conversation_id, role, text, answer_ids, stats, stopped,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        row,
    )
    return int(cursor.lastrowid)


def _insert_image_reference(
    connection: sqlite3.Connection, message_id: int, position: int, image: LoadedImage
) -> None:
    connection.execute(
        "INSERT INTO message_images (message_id, position, digest, name, width, height)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (message_id, position, image.digest, image.name, *image.size),
    )


def _touch(connection: sqlite3.Connection, conversation_id: int, now: float) -> None:
    connection.execute(
        "UPDATE conversations SET updated_at = ? WHERE id = ?", (now, conversation_id)
    )


def _column(connection: sqlite3.Connection, query: str, parameters: tuple) -> list:
    return [row[0] for row in connection.execute(query, parameters)]


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise ValueError(f"unknown message role {role!r}; expected one of {sorted(ROLES)}")


def _check_digest(digest: str) -> None:
    # Digests become file names: anything but 64 lower-case hex digits could leave the store.
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise ValueError(f"not a sha256 hex digest: {digest!r}")


def _is_corruption(exc: sqlite3.DatabaseError) -> bool:
    # "file is not a database" and "database disk image is malformed" raise the base class;
    # subclasses mean something else (locked, read-only, full: OperationalError).
    return type(exc) is sqlite3.DatabaseError


def _contains_text(haystack: str | None, casefolded_needle: str) -> bool:
    return haystack is not None and casefolded_needle in haystack.casefold()


def _clean_title(title: str) -> str:
    return " ".join(title.split()) or DEFAULT_TITLE


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1].rstrip() + "…"


def _ids_to_json(answer_ids: Sequence[int] | None) -> str | None:
    # int() also accepts numpy integers, which json cannot serialise.
    return None if answer_ids is None else json.dumps([int(token) for token in answer_ids])


def _stats_to_json(stats: dict | None) -> str | None:
    return None if stats is None else json.dumps(stats, default=_plain_number)


def _plain_number(value: Any) -> Any:
    # numpy scalars (e.g. timings computed with numpy) expose .item() -> int | float.
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"cannot store {type(value).__name__} in message stats")


def _unlink_quietly(paths: list[Path]) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            logger.warning("could not remove %s", path)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.rstrip(".")
    return str(exc).rstrip(".") or type(exc).__name__
