"""The open conversation: which chat the window shows, its title, and its creation on the
first message. The flows (asking, extraction, reading ahead) and the sidebar share this one
object instead of reaching into the window. Reads go to the store directly (short, under
the store's database lock); every write goes through the storage thread.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal

from desktop.core.conversation.transcript import Transcript
from desktop.core.history import DEFAULT_TITLE, HistoryError, HistoryStore
from desktop.core.history.handle import ChatHandle
from desktop.gui.image_ref import ImageRef
from desktop.gui.workers.storage_worker import StorageController


class ConversationSession(QObject):
    opened = Signal(ChatHandle)  # another chat is shown (a new one has no id yet)
    created = Signal(ChatHandle)  # the open new chat now exists in the store
    title_changed = Signal(str)
    changed = Signal()  # the store's list of chats may have changed (new message, rename)
    problem = Signal(str)

    def __init__(
        self, store: HistoryStore, storage: StorageController, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.storage = storage
        self.chat = ChatHandle()
        self.transcript = Transcript()  # the open chat as data: the view renders it
        # Stored messages a Regenerate or Edit dropped that the engine has not deleted yet:
        # a chat opened meanwhile must not show them again.
        self._dropping: set[int] = set()

    @property
    def conversation_id(self) -> int | None:
        return self.chat.id

    @property
    def title(self) -> str:
        if self.chat.id is None:
            return self.chat.title
        try:
            return self.store.title_of(self.chat.id)
        except HistoryError:
            return ""

    def open(self, conversation_id: int | None) -> ChatHandle:
        """Shows another chat: its transcript is read from the store (a read, short, on this
        thread); a chat that cannot be read opens empty, with the reason as `problem`."""
        self.chat = ChatHandle(conversation_id)
        self.transcript = Transcript()
        if conversation_id is not None:
            try:
                messages = self.store.messages(conversation_id)
            except HistoryError as exc:
                self.problem.emit(str(exc))
            else:
                kept = [message for message in messages if message.id not in self._dropping]
                self.transcript = Transcript.from_stored(kept, ImageRef.stored)
        self.opened.emit(self.chat)
        self.title_changed.emit(self.title)
        return self.chat

    def ensure(self, title: str) -> ChatHandle:
        """The open chat, to which a first message is about to go: a new chat is titled
        after it and created on the storage thread now (a worker that stores the message
        first creates it itself)."""
        chat = self.chat
        if chat.id is None and chat.title == DEFAULT_TITLE:
            chat.name(title)
            self.title_changed.emit(chat.title)
            self.storage.submit(
                lambda: chat.resolve(self.store),
                on_done=lambda _id: self._on_created(chat),
                on_error=self.problem.emit,
            )
        return chat

    def dropping(self, message_ids: Iterable[int]) -> None:
        """A request on its way to the engine deletes these stored messages."""
        self._dropping.update(message_ids)

    def dropped(self, message_ids: Iterable[int]) -> None:
        """Its result came: the store holds what it holds again."""
        self._dropping.difference_update(message_ids)

    def is_open(self, chat: ChatHandle) -> bool:
        return self.chat.same_chat(chat)

    def rename(self, conversation_id: int, title: str) -> None:
        def done(_result: object) -> None:
            self.changed.emit()
            if conversation_id == self.chat.id:
                self.title_changed.emit(self.title)

        self.storage.submit(
            lambda: self.store.rename_conversation(conversation_id, title),
            on_done=done,
            on_error=self.problem.emit,
        )

    def delete(self, conversation_id: int) -> None:
        """Deletes a chat for good (its Undo offer lapsed)."""
        self.storage.submit(
            lambda: self.store.delete_conversation(conversation_id),
            on_done=lambda _result: self.changed.emit(),
            on_error=self.problem.emit,
        )

    def _on_created(self, chat: ChatHandle) -> None:
        self.changed.emit()
        if chat is self.chat:
            self.created.emit(chat)
