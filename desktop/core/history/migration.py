"""Bringing a history written by an older DeskLens up to schema 5, in the open transaction.

Schema 1 stored a question as the whole composed prompt (system prompt and OCR text around the
typed words); schema 2 added `typed`; schema 3 keeps the typed words as `text`, the prompt as
`prompt`, what was put before the question as columns, the request's settings, how an answer
ended, an error's kind and an extraction's Markdown and JSON in their own columns; schema 4
adds a question's regions and schema 5 an answer's evidence (columns, nothing moved). This is
the only place that reads the old prompt markers back.
"""

from __future__ import annotations

import json
import sqlite3

from desktop.core import bounded_json

SCHEMA_VERSION = 5

# Columns added by schema 2 to 5 (a table made by an older version lacks them).
NEW_COLUMNS = {
    "typed": "TEXT",  # schema 2 only: moved into `text`, NULL since schema 3
    "prompt": "TEXT",
    "preset": "TEXT",
    "settings": "TEXT",
    "grounded": "INTEGER NOT NULL DEFAULT 0",
    "with_system": "INTEGER NOT NULL DEFAULT 0",
    "finish": "TEXT",
    "error_kind": "TEXT",
    "ocr_markdown": "TEXT",
    "ocr_json": "TEXT",
    "regions": "TEXT",  # schema 4: a question's regions (JSON), added as it is: no rows move
    # Schema 5: an answer's evidence (JSON, core/evidence.py), kept when it is found; older
    # answers have none (their chat shows what the chat's extractions still give).
    "evidence": "TEXT",
}

# What schema 1 and 2 put between the added context and the typed words.
_QUESTION_LABEL = "Question: "
_SEPARATOR = "\n\n"


def migrate(connection: sqlite3.Connection, version: int) -> None:
    """Adds the missing columns, then moves older rows' data where schema 3 keeps it."""
    present = {
        row[0] for row in connection.execute("SELECT name FROM pragma_table_info('messages')")
    }
    for name, declaration in NEW_COLUMNS.items():
        if name not in present:
            connection.execute(f"ALTER TABLE messages ADD COLUMN {name} {declaration}")
    if version < SCHEMA_VERSION:
        upgrade_rows(connection)


def upgrade_rows(connection: sqlite3.Connection) -> None:
    """Rows written by schema 1 or 2 (also those recovered from such a file) as schema 3."""
    _upgrade_questions(connection)
    connection.execute(
        "UPDATE messages SET finish = 'stopped' WHERE role = 'assistant' AND stopped = 1"
        " AND finish IS NULL"
    )
    _upgrade_extractions(connection)


def _upgrade_questions(connection: sqlite3.Connection) -> None:
    found = connection.execute(
        "SELECT id, text, typed FROM messages WHERE role = 'user' AND prompt IS NULL"
    ).fetchall()
    for message_id, text, typed in found:
        words = typed if typed is not None else _typed_question(text)
        if words == text:
            continue
        grounded, system = _context(text[: len(text) - len(words)])
        connection.execute(
            "UPDATE messages SET text = ?, prompt = ?, grounded = ?, with_system = ?,"
            " typed = NULL WHERE id = ?",
            (words, text, int(grounded), int(system), message_id),
        )


def _typed_question(prompt: str) -> str:
    head, separator, question = prompt.rpartition(_SEPARATOR + _QUESTION_LABEL)
    return question if separator and head else prompt


def _context(head: str) -> tuple[bool, bool]:
    """(grounded, system prompt) of what schema 1 put before the typed words."""
    from desktop.core.ocr.grounding import NO_TEXT, OCR_MARK

    grounded = OCR_MARK in head or NO_TEXT in head
    system = not head.startswith((OCR_MARK, NO_TEXT, "Image 1:"))
    return grounded, system


def _upgrade_extractions(connection: sqlite3.Connection) -> None:
    """An extraction's Markdown and JSON rode in its stats before schema 3."""
    found = connection.execute(
        "SELECT id, text, stats FROM messages WHERE role = 'ocr' AND ocr_markdown IS NULL"
    ).fetchall()
    for message_id, text, stats in found:
        extra = bounded_json.stored(stats)
        extra = extra if isinstance(extra, dict) else {}
        seconds = extra.get("seconds", 0.0)
        connection.execute(
            "UPDATE messages SET ocr_markdown = ?, ocr_json = ?, stats = ? WHERE id = ?",
            (
                str(extra.get("markdown", text)),
                json.dumps(extra.get("json", {}), ensure_ascii=False),
                json.dumps({"seconds": seconds if isinstance(seconds, (int, float)) else 0.0}),
                message_id,
            ),
        )
