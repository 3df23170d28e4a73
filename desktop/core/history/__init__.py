"""Conversation history: SQLite (WAL) for the text, a content-addressed folder for the images.

Layout under the store's folder:
    history.sqlite3                      conversations, messages, message_images
    images/<first 2 hex>/<digest>.png    each distinct picture once, named by its digest
"""

from desktop.core.chat import ErrorKind
from desktop.core.history.records import (
    DATABASE_NAME,
    DEFAULT_TITLE,
    IMAGES_FOLDER,
    PREVIEW_CHARS,
    ROLES,
    AskedWith,
    ConversationSummary,
    Finish,
    HistoryError,
    Role,
    StoredImage,
    StoredMessage,
    StoredOcr,
    title_from,
)
from desktop.core.history.store import HistoryStore

__all__ = [
    "DATABASE_NAME",
    "DEFAULT_TITLE",
    "IMAGES_FOLDER",
    "PREVIEW_CHARS",
    "ROLES",
    "AskedWith",
    "ConversationSummary",
    "ErrorKind",
    "Finish",
    "Role",
    "HistoryError",
    "HistoryStore",
    "StoredImage",
    "StoredMessage",
    "StoredOcr",
    "title_from",
]
