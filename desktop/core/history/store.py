"""The conversation store: SQLite (WAL) for the text, a content-addressed folder for images.

Every write is one committed transaction; a failed write rolls back and raises `HistoryError`,
leaving earlier data as it was. `_lock` serialises the database connection, held only for SQL:
a reader (the GUI thread) never waits for a picture to be encoded and synced. `_files_lock`
serialises the writes that create or delete image files: none is removed under a new reference.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from desktop.core.chat import ErrorKind
from desktop.core.history import rows
from desktop.core.history.database import column, open_database
from desktop.core.history.image_files import ImageFiles, check_digest
from desktop.core.history.records import (
    DATABASE_NAME,
    DEFAULT_TITLE,
    IMAGES_FOLDER,
    PREVIEW_CHARS,
    AskedWith,
    ConversationSummary,
    Finish,
    HistoryError,
    StoredImage,
    StoredMessage,
    StoredOcr,
    clean_title,
    marked,
    one_line,
    reason,
)
from desktop.core.images import LoadedImage
from desktop.core.pictures import SHARED

logger = logging.getLogger(__name__)


class HistoryStore:
    """The app's conversation store. Every method is thread-safe."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.database_path = self.folder / DATABASE_NAME
        self.images_folder = self.folder / IMAGES_FOLDER
        self._lock = threading.RLock()
        self._files_lock = threading.Lock()
        try:
            self.images_folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistoryError(
                f"Could not create the chat history folder {self.folder}: {reason(exc)}."
            ) from exc
        opened = open_database(self.database_path)
        self._connection = opened.connection
        self.recovered_from: Path | None = opened.recovered_from
        self.notice: str | None = opened.notice
        self._files = ImageFiles(self.images_folder)
        self._files.remove_stale_partial_files()

    # --- conversations ---------------------------------------------------------------------

    def create_conversation(self, title: str = DEFAULT_TITLE) -> int:
        now = time.time()
        with self._transaction() as connection:
            conversation_id = rows.fresh_id(connection, "conversations")
            connection.execute(
                "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (conversation_id, clean_title(title), now, now),
            )
        return conversation_id

    def rename_conversation(self, conversation_id: int, title: str) -> bool:
        """Returns False when the conversation no longer exists."""
        with self._transaction() as connection:
            cursor = connection.execute(
                "UPDATE conversations SET title = ?, updated_at = ? WHERE id = ?",
                (clean_title(title), time.time(), conversation_id),
            )
        return cursor.rowcount > 0

    def delete_conversation(self, conversation_id: int) -> bool:
        """Deletes the conversation, its messages and the images no other message uses.
        Returns False when it no longer exists."""
        with self._files_lock:
            with self._transaction() as connection:
                digests = column(
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
                    ORDER BY m.id DESC LIMIT 1),
                   (SELECT m.role || ' ' || coalesce(m.finish, '') FROM messages m
                    WHERE m.conversation_id = c.id ORDER BY m.id DESC LIMIT 1)
            FROM conversations c
            WHERE :needle = ''
               OR contains_text(c.title, :needle)
               OR EXISTS (SELECT 1 FROM messages m
                          WHERE m.conversation_id = c.id AND contains_text(m.text, :needle))
            ORDER BY c.updated_at DESC, c.id DESC
        """
        with self._reading() as connection:
            found = connection.execute(query, {"needle": needle.casefold()}).fetchall()
        return [
            ConversationSummary(
                id=row[0],
                title=row[1],
                created_at=row[2],
                updated_at=row[3],
                message_count=row[4],
                preview=one_line(marked(row[5] or "", row[6] or ""), PREVIEW_CHARS),
            )
            for row in found
        ]

    def title_of(self, conversation_id: int) -> str:
        """The conversation's title; "" when it does not exist."""
        with self._reading() as connection:
            row = connection.execute(
                "SELECT title FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
        return row[0] if row is not None else ""

    # --- messages --------------------------------------------------------------------------

    def add_message(
        self,
        conversation_id: int,
        role: str,
        text: str,
        images: Sequence[LoadedImage] = (),
        answer_ids: Sequence[int] | None = None,
        stats: dict[str, Any] | None = None,
        stopped: bool = False,
        *,
        prompt: str | None = None,
        asked: AskedWith | None = None,
        finish: Finish | None = None,
        error_kind: ErrorKind | None = None,
        ocr: StoredOcr | None = None,
    ) -> StoredMessage:
        """Stores a message and copies its images into the store (the files first, outside
        the database lock; the rows then in one transaction). A question: `text` is what the
        user typed, `prompt` the prompt composed around it (None: the same), `asked` how."""
        rows.check_role(role)
        for image in images:
            check_digest(image.digest)
        now = time.time()
        row = rows.message_row(
            conversation_id, role, text, answer_ids, stats, stopped, now,
            prompt=prompt, asked=asked or AskedWith(), finish=finish, error_kind=error_kind,
            ocr=ocr,
        )  # fmt: skip
        created: list[str] = []
        with self._files_lock:
            try:
                for image in images:
                    if self._write_image_file(image):
                        created.append(image.digest)
                with self._transaction() as connection:
                    rows.require_conversation(connection, conversation_id)
                    message_id = rows.insert_message(connection, row)
                    for position, image in enumerate(images):
                        rows.insert_image_reference(connection, message_id, position, image)
                    rows.touch(connection, conversation_id, now)
                    message = self._fetch_message(connection, message_id)
            except BaseException:
                # Nothing refers to the files this call created (the rows were rolled back,
                # and writers that could have reused them wait for `_files_lock`).
                self._remove_unreferenced_images(created)
                raise
        assert message is not None  # inserted by this very transaction
        return message

    def update_message(
        self,
        message_id: int,
        *,
        text: str | None = None,
        answer_ids: Sequence[int] | None = None,
        stats: dict[str, Any] | None = None,
        stopped: bool | None = None,
    ) -> StoredMessage | None:
        """Changes the given fields (None leaves one as it is). Returns the updated message,
        or None when it no longer exists (e.g. its conversation was deleted meanwhile)."""
        changes: dict[str, Any] = {}
        if text is not None:
            changes["text"] = text
        if answer_ids is not None:
            changes["answer_ids"] = rows.ids_to_json(answer_ids)
        if stats is not None:
            changes["stats"] = rows.stats_to_json(stats)
        if stopped is not None:
            changes["stopped"] = int(stopped)
        with self._transaction() as connection:
            if changes:
                # Column names come from the fixed keys above, never from the caller.
                assignments = ", ".join(f"{name} = ?" for name in changes)
                connection.execute(
                    f"UPDATE messages SET {assignments} WHERE id = ?",
                    (*changes.values(), message_id),
                )
            message = self._fetch_message(connection, message_id)
            if message is not None and changes:
                rows.touch(connection, message.conversation_id, time.time())
        return message

    def delete_message(self, message_id: int) -> bool:
        """Deletes one message and the images no other message uses. Returns False when it
        no longer exists."""
        with self._files_lock:
            with self._transaction() as connection:
                digests = column(
                    connection,
                    "SELECT digest FROM message_images WHERE message_id = ?",
                    (message_id,),
                )
                row = connection.execute(
                    "SELECT conversation_id FROM messages WHERE id = ?", (message_id,)
                ).fetchone()
                if row is not None:
                    connection.execute("DELETE FROM messages WHERE id = ?", (message_id,))
                    rows.touch(connection, row[0], time.time())
            self._remove_unreferenced_images(digests)
        return row is not None

    def delete_messages(self, conversation_id: int, message_ids: Sequence[int]) -> int:
        """Deletes the messages `message_ids` of the conversation in one transaction (a
        regenerated answer or an edited question and what followed it, as the user saw
        them), and the images no other message uses. Returns how many were deleted."""
        ids = [int(i) for i in message_ids]
        marks = ",".join("?" * len(ids)) or "NULL"
        chosen = f"FROM messages WHERE conversation_id = ? AND id IN ({marks})"
        with self._files_lock:
            with self._transaction() as connection:
                digests = column(
                    connection,
                    f"SELECT DISTINCT digest FROM message_images WHERE message_id IN"
                    f" (SELECT id {chosen})",
                    (conversation_id, *ids),
                )
                cursor = connection.execute(f"DELETE {chosen}", (conversation_id, *ids))
                if cursor.rowcount:
                    rows.touch(connection, conversation_id, time.time())
            self._remove_unreferenced_images(digests)
        return cursor.rowcount

    def set_evidence(self, message_id: int, evidence: str) -> bool:
        """Keeps an answer's evidence (JSON, core/evidence.py) for when its chat is opened
        again; the chat's order is not changed. False when the answer no longer exists."""
        with self._transaction() as connection:
            return rows.set_evidence(connection, message_id, evidence)

    def evidence_of(self, conversation_id: int) -> dict[int, str]:
        """The kept evidence of the chat's answers (JSON), by message id."""
        with self._reading() as connection:
            return rows.evidence_by_message(connection, conversation_id)

    def messages(self, conversation_id: int) -> list[StoredMessage]:
        """The conversation's messages, oldest first."""
        with self._reading() as connection:
            query = f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?"
            found = connection.execute(query + " ORDER BY id", (conversation_id,)).fetchall()
            images = self._images_by_message(
                connection,
                "SELECT i.message_id, i.digest, i.name, i.width, i.height"
                " FROM message_images i JOIN messages m ON m.id = i.message_id"
                " WHERE m.conversation_id = ? ORDER BY i.message_id, i.position",
                (conversation_id,),
            )
        return [rows.message_from_row(row, images.get(row[0], [])) for row in found]

    def load_image(self, stored: StoredImage) -> LoadedImage:
        """Reads a stored image back (kept pixels first); `ImageError` if it is gone or damaged."""
        return SHARED.load(stored.digest, stored.path, stored.name)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

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
                    raise self._save_error(exc) from exc
                raise

    def _save_error(self, exc: BaseException) -> HistoryError:
        return HistoryError(
            f"Could not save to the chat history: {reason(exc)}. Check that the disk has "
            f"free space and that {self.folder} is writable; earlier messages are kept."
        )

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._connection
            except sqlite3.Error as exc:
                raise HistoryError(f"Could not read the chat history: {reason(exc)}.") from exc

    def _rollback_quietly(self) -> None:
        # SQLite may already have rolled back by itself (e.g. after a full disk).
        try:
            if self._connection.in_transaction:
                self._connection.execute("ROLLBACK")
        except sqlite3.Error:
            logger.exception("rolling back the history transaction failed")

    # --- rows and image files --------------------------------------------------------------

    def _fetch_message(
        self, connection: sqlite3.Connection, message_id: int
    ) -> StoredMessage | None:
        row = connection.execute(
            f"SELECT {rows.MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,)
        ).fetchone()
        if row is None:
            return None
        images = self._images_by_message(
            connection,
            "SELECT message_id, digest, name, width, height FROM message_images"
            " WHERE message_id = ? ORDER BY position",
            (message_id,),
        )
        return rows.message_from_row(row, images.get(message_id, []))

    def _images_by_message(
        self, connection: sqlite3.Connection, query: str, parameters: tuple[Any, ...]
    ) -> dict[int, list[StoredImage]]:
        grouped: dict[int, list[StoredImage]] = {}
        for message_id, digest, name, width, height in connection.execute(query, parameters):
            try:
                path = self._files.path(digest)
            except ValueError:  # a damaged row: its picture cannot be found, the rest is read
                logger.warning("message %s: picture %r has no valid digest", message_id, name)
                continue
            stored = StoredImage(digest, path, name, width, height)
            grouped.setdefault(message_id, []).append(stored)
        return grouped

    def _write_image_file(self, image: LoadedImage) -> bool:
        try:
            return self._files.write(image)
        except OSError as exc:
            raise self._save_error(exc) from exc

    def _remove_unreferenced_images(self, digests: list[str]) -> None:
        # Runs after the deleting transaction committed: a crash in between leaves an unused
        # file behind, never a message whose image is missing. The deletion itself succeeded,
        # so a failure here is only logged.
        query = "SELECT 1 FROM message_images WHERE digest = ? LIMIT 1"

        def is_used(digest: str) -> bool:
            return self._connection.execute(query, (digest,)).fetchone() is not None

        with self._lock:
            try:
                self._files.remove_unused(digests, is_used)
            except sqlite3.Error:
                logger.exception("could not look for unused images in the history")
