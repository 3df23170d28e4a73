"""A chat as the app holds it: an existing conversation, or a new one that is created in the
store by whichever thread first needs its id (the storage thread, asked at once, or a worker
about to save the chat's first message). The GUI thread never writes to create it."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from desktop.core.history.records import DEFAULT_TITLE, title_from

if TYPE_CHECKING:
    from desktop.core.history.store import HistoryStore


class ChatHandle:
    def __init__(self, conversation_id: int | None = None, title: str = DEFAULT_TITLE) -> None:
        self._id = conversation_id
        self.title = title
        self._lock = threading.Lock()

    @property
    def id(self) -> int | None:
        """The conversation's id; None until it has been created."""
        return self._id

    def name(self, text: str) -> None:
        """Titles a chat that is not created yet after its first question or image."""
        if self._id is None:
            self.title = title_from(text)

    def resolve(self, store: HistoryStore) -> int:
        """The conversation's id, creating it first if needed (any thread but the GUI's).
        Raises `HistoryError` when it cannot be created."""
        with self._lock:
            if self._id is None:
                self._id = store.create_conversation(self.title)
            return self._id

    def same_chat(self, other: ChatHandle | None) -> bool:
        if other is None:
            return False
        return other is self or (self._id is not None and other.id == self._id)
