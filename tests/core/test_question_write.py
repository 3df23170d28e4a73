"""The question is stored beside its answer (issue 58): no image encode or disk sync stands
between Send and the first token, and the history still holds the question before its answer,
for a new chat, a rewind and a retry alike. Real engine (tiny model), real history store."""

from __future__ import annotations

import threading

import pytest

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService, StoredChat
from desktop.core.conversation.beside import BesideWrite
from desktop.core.history import HistoryStore
from desktop.core.history.handle import ChatHandle

SETTINGS = GenerationSettings(max_new_tokens=8)
GIVE_UP_S = 60  # a write the first token waited for would wait forever: fail instead


class WritesWaitForTheFirstToken(HistoryStore):
    """Every write waits until the answer's first text is out. Were a write in front of the
    model, the first token would never come and the wait would give up (the test fails)."""

    def __init__(self, folder) -> None:
        super().__init__(folder)
        self.first_text = threading.Event()
        self.writes: list[tuple[str, str]] = []

    def _after_first_text(self, what: str) -> None:
        assert self.first_text.wait(GIVE_UP_S), f"the first token waited for {what}"
        self.writes.append((what, threading.current_thread().name))

    def create_conversation(self, *args, **kwargs):
        self._after_first_text("a new chat")
        return super().create_conversation(*args, **kwargs)

    def add_message(self, conversation_id, role, *args, **kwargs):
        self._after_first_text(f"a {role} message")
        return super().add_message(conversation_id, role, *args, **kwargs)

    def delete_messages(self, *args, **kwargs):
        self._after_first_text("a rewind")
        return super().delete_messages(*args, **kwargs)


@pytest.fixture
def store(tmp_path):
    with WritesWaitForTheFirstToken(tmp_path / "history") as opened:
        yield opened


def ask(service, store, question, where, images=()):
    def streamed(chunk: str) -> None:
        store.first_text.set()

    store.first_text.clear()
    return service.ask(AskRequest(question, tuple(images), SETTINGS, where), None, streamed)


def test_a_new_chats_question_and_image_are_written_beside_the_answer(engine, store, image):
    service = ConversationService(engine, store)
    chat = ChatHandle(title="Screenshot")
    result = ask(service, store, "What is it?", StoredChat(chat), [image])
    assert result.answer.ok and result.answer.text and result.save_error is None
    stored = store.messages(chat.id)
    assert [(m.id, m.role) for m in stored] == [
        (result.user_message_id, "user"),
        (result.answer_message_id, "assistant"),
    ]
    assert stored[0].images[0].digest == image.digest
    assert store.load_image(stored[0].images[0]).digest == image.digest  # the PNG is whole
    beside = "desklens-history-write"
    assert store.writes[:2] == [("a new chat", beside), ("a user message", beside)]
    assert store.writes[2] == ("a assistant message", threading.current_thread().name)
    # The next question of the chat feeds only itself: nothing is replayed from the store.
    again = ask(service, store, "And then?", StoredChat(chat))
    assert again.answer.stats.images_encoded == 0
    assert again.answer.stats.input_tokens < again.answer.stats.context_tokens // 2


def test_a_rewind_deletes_beside_the_answer_and_answers_without_the_dropped_turns(
    engine, store, image
):
    service = ConversationService(engine, store)
    chat = ChatHandle()
    one = ask(service, store, "First?", StoredChat(chat), [image])
    two = ask(service, store, "Second?", StoredChat(chat))
    dropped = (two.user_message_id, two.answer_message_id)
    other = ask(service, store, "Other?", StoredChat(chat, drops=dropped))
    # The reference: the same chat asked with no second turn ever, on a fresh service.
    engine.reset()
    reference = ConversationService(engine)
    ref_one = reference.ask(AskRequest("First?", (image,), SETTINGS))
    assert ref_one.turn.answer_ids == one.turn.answer_ids
    from desktop.core.conversation import GivenTurns

    ref_other = reference.ask(AskRequest("Other?", (), SETTINGS, GivenTurns((one.turn,))))
    assert other.turn.answer_ids == ref_other.turn.answer_ids
    texts = [(m.role, m.text) for m in store.messages(chat.id)]
    assert texts == [
        ("user", "First?"), ("assistant", one.answer.text),
        ("user", "Other?"), ("assistant", other.answer.text),
    ]  # fmt: skip
    assert ("a rewind", "desklens-history-write") in store.writes


def test_a_retry_stores_no_second_question(engine, store, image):
    service = ConversationService(engine, store)
    chat = ChatHandle()
    first = ask(service, store, "What is it?", StoredChat(chat), [image])
    retried = ask(
        service, store, "What is it?",
        StoredChat(chat, user_message_id=first.user_message_id, drops=(first.answer_message_id,)),
        [image],
    )  # fmt: skip
    assert retried.user_message_id == first.user_message_id
    assert [m.role for m in store.messages(chat.id)] == ["user", "assistant"]


def test_a_write_that_fails_unexpectedly_is_raised_to_the_caller_once():
    def broken() -> None:
        raise RuntimeError("disk on fire")

    started = BesideWrite(broken)
    started.start()
    with pytest.raises(RuntimeError, match="disk on fire"):
        started.wait()
    started.wait()  # raised once
    ran: list[int] = []
    never_started = BesideWrite(lambda: ran.append(1))
    never_started.wait()  # an answer with no engine: written now, on the caller's thread
    never_started.wait()
    assert ran == [1]
