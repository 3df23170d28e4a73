"""An id the history gave is never given again, even after its row is deleted and the history
reopened: SQLite's own choice (the largest id + 1) gave a dropped last answer's id to the next
answer, and a deleted last chat's id to the next chat, where a late result for the old one
would have landed."""

from __future__ import annotations

from pathlib import Path

from desktop.core.history import HistoryStore


def test_a_deleted_last_message_or_chat_keeps_its_id_to_itself(tmp_path: Path) -> None:
    folder = tmp_path / "history"
    with HistoryStore(folder) as store:
        chat = store.create_conversation()
        store.add_message(chat, "user", "question")
        answer = store.add_message(chat, "assistant", "first answer")
        assert store.delete_messages(chat, [answer.id]) == 1
        regenerated = store.add_message(chat, "assistant", "second answer")
        assert regenerated.id > answer.id

        gone = store.create_conversation("Deleted")
        assert store.delete_conversation(gone)
        assert store.create_conversation("Next") > gone

    with HistoryStore(folder) as reopened:  # kept in the file, not in the store object
        assert reopened.delete_messages(chat, [regenerated.id]) == 1
        assert reopened.add_message(chat, "assistant", "third").id > regenerated.id
        last = max(c.id for c in reopened.list_conversations())
        assert reopened.delete_conversation(last)
        assert reopened.create_conversation() > last
