"""The conversation service without Qt, on the real engine and a real history store: the ask use
case that the app, the CLI and the API share (stored chats, replay, rewind, grounding, retry,
follow-ups, the caller's history, read-ahead, failures)."""

from __future__ import annotations

import copy
import threading

from PIL import ImageOps

from desktop.core.chat import Conversation, GenerationSettings, Turn
from desktop.core.conversation import (
    AskRequest,
    ConversationService,
    FollowUp,
    GivenTurns,
    Ground,
    GroundTexts,
    PrepareRequest,
    StoredChat,
)
from desktop.core.history import ErrorKind, HistoryError, Role
from desktop.core.history.export import conversation_markdown
from desktop.core.history.handle import ChatHandle
from desktop.core.images import ImageError, LoadedImage, load_image

SETTINGS = GenerationSettings(max_new_tokens=8)


def fresh_answer_ids(engine, turns, question, images) -> list[int]:
    """What an engine with nothing held answers for `turns` + `question` (the reference)."""
    engine.reset()
    conversation = Conversation(copy.copy(list(turns)))
    engine.ask(conversation, question, images, SETTINGS)
    engine.reset()
    return conversation.turns[-1].answer_ids


def test_a_new_chat_is_created_and_both_messages_are_stored(engine, store, image):
    service = ConversationService(engine, store)
    chat = ChatHandle(title="Invoice")
    streamed: list[str] = []
    request = AskRequest("What is it?", (image,), SETTINGS, StoredChat(chat))
    result = service.ask(request, None, streamed.append)
    assert result.answer.ok and "".join(streamed) == result.answer.text
    assert chat.id is not None and result.save_error is None
    stored = store.messages(chat.id)
    assert [m.role for m in stored] == ["user", "assistant"]
    assert [m.id for m in stored] == [result.user_message_id, result.answer_message_id]
    assert stored[0].text == "What is it?" and stored[0].images[0].digest == image.digest
    assert stored[1].answer_ids == result.turn.answer_ids


def test_a_reopened_chat_is_replayed_and_answers_as_a_fresh_conversation_would(
    engine, store, image
):
    first = ConversationService(engine, store)
    chat = ChatHandle()
    one = first.ask(AskRequest("First?", (image,), SETTINGS, where=StoredChat(chat)))
    # Another service (a restarted app) with an engine that holds nothing of it.
    engine.reset()
    later = ConversationService(engine, store)
    two = later.ask(AskRequest("Second?", (), SETTINGS, where=StoredChat(ChatHandle(chat.id))))
    # The same service asked again: only the new question is fed (the KV state holds the rest).
    three = later.ask(AskRequest("Third?", (), SETTINGS, where=StoredChat(ChatHandle(chat.id))))
    assert three.answer.stats.images_encoded == 0
    assert three.answer.stats.input_tokens < three.answer.stats.context_tokens // 2
    assert two.answer.ok  # and as a fresh engine would answer (the reference resets it):
    assert two.turn.answer_ids == fresh_answer_ids(engine, [one.turn], "Second?", [])


def test_a_chat_a_server_answered_goes_on_with_this_computers_model(engine, store, image):
    """A model server's answers are stored without token ids: replayed, their text is what
    this computer's engine reads, so switching models mid-chat keeps the chat."""
    said = ConversationService(engine).ask(AskRequest("What is it?", (image,), SETTINGS)).answer
    chat = store.create_conversation("Asked a server")
    store.add_message(chat, "user", "What is it?", [image])
    store.add_message(chat, "assistant", said.text, answer_ids=[], stats={"server": "10.0.0.5"})
    engine.reset()
    request = AskRequest("And the colour?", (), SETTINGS, where=StoredChat(ChatHandle(chat)))
    result = ConversationService(engine, store).ask(request)
    turn = Turn("What is it?", [image], said.text, engine.codec.encode(said.text))
    assert result.answer.ok and said.text
    assert result.turn.answer_ids == fresh_answer_ids(engine, [turn], "And the colour?", [])
    alone = ConversationService(engine).ask(AskRequest("And the colour?", (), SETTINGS)).answer
    reread = result.answer.stats.input_tokens - alone.stats.input_tokens
    assert reread >= len(turn.answer_ids) + 8  # the first turn, its image and its answer


def test_rewind_drops_the_later_messages_and_answers_as_if_they_never_were(engine, store, image):
    service = ConversationService(engine, store)
    chat = ChatHandle()
    one = service.ask(AskRequest("First?", (image,), SETTINGS, where=StoredChat(chat)))
    two = service.ask(AskRequest("Second?", (), SETTINGS, where=StoredChat(chat)))
    dropped = (two.user_message_id, two.answer_message_id)
    again = service.ask(AskRequest("Other?", (), SETTINGS, where=StoredChat(chat, drops=dropped)))
    roles = [(m.role, m.text) for m in store.messages(chat.id)]
    assert roles[:2] == [("user", "First?"), ("assistant", one.answer.text)]
    assert roles[2][1] == "Other?" and len(roles) == 4
    assert again.turn.answer_ids == fresh_answer_ids(engine, [one.turn], "Other?", [])


class CountingOcr:
    """The real fast OCR, counting its reads."""

    def __init__(self) -> None:
        from desktop.core.ocr import OcrEngine

        self.engine, self.calls = OcrEngine(), 0

    def extract(self, image):
        self.calls += 1
        return self.engine.extract(image)


def test_grounding_and_the_system_prompt_are_composed_once_and_stored_whole(engine, store, image):
    from desktop.core.ocr import grounding_text

    service = ConversationService(engine, store)
    ocr = CountingOcr()
    request = AskRequest("What is the total?", (image,), SETTINGS, where=StoredChat(ChatHandle()),
                         context=Ground(lambda: ocr), system="Answer briefly.")  # fmt: skip
    result = service.ask(request)
    assert ocr.calls == 1
    lines = grounding_text(ocr.engine.extract(image))
    assert "Line 2" in lines
    assert result.prompt == f"Answer briefly.\n\n{lines}\n\nQuestion: What is the total?"
    stored = store.messages(request.chat.id)[0]
    assert (stored.text, stored.prompt) == ("What is the total?", result.prompt)
    assert (stored.asked.grounded, stored.asked.system, stored.asked.settings) == (
        True,
        True,
        SETTINGS,
    )
    exported = conversation_markdown("Chat", store.messages(request.chat.id), str)
    assert "What is the total?" in exported and "Line 2" not in exported  # the typed words
    # A retry sends the stored prompt as it is: composed no second time, not stored again.
    retry = request.retry(result)
    assert retry.question == result.prompt and not retry.grounded and retry.system == ""
    assert retry.where.user_message_id == result.user_message_id and retry.chat is request.chat


class RecordingEngine:
    """The tiny engine, recording the drafting hints each ask gets."""

    def __init__(self, engine) -> None:
        self.engine, self.hints = engine, []

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def ask(self, conversation, question, images, settings, on_text=None, hints=()):
        self.hints.append(list(hints))
        return self.engine.ask(conversation, question, images, settings, on_text, hints)


def test_a_grounded_question_drafts_from_the_ocr_it_ran(engine, image):
    """Issue 37: the OCR run for "Use the extracted text" was put before the question but not
    offered to the drafter, which the answer (often copying it) would gain from."""
    from desktop.core.draft_texts import draft_hints

    recording, ocr = RecordingEngine(engine), CountingOcr()
    request = AskRequest(
        "Total?", (image,), SETTINGS, context=Ground(lambda: ocr), hints=("given",)
    )
    assert ConversationService(recording).ask(request).answer.ok
    expected = draft_hints([ocr.engine.extract(image)])
    assert expected and recording.hints == [["given", *expected]] and ocr.calls == 1
    ConversationService(recording).ask(AskRequest("Total?", (image,), SETTINGS))
    assert recording.hints[-1] == []  # not grounded: no OCR, no drafts from it


def test_ground_texts_given_by_the_caller_go_before_the_question(engine, image):
    result = ConversationService(engine).ask(
        AskRequest("Total?", (image,), SETTINGS, context=GroundTexts(("A 1", "B 2")))
    )
    assert result.prompt == "Image 1:\nA 1\n\nImage 2:\nB 2\n\nQuestion: Total?"


def test_without_a_chat_nothing_is_stored_and_each_ask_is_a_new_conversation(engine, image):
    service = ConversationService(engine)
    one = service.ask(AskRequest("What is it?", (image,), SETTINGS))
    two = service.ask(AskRequest("What is it?", (image,), SETTINGS))
    assert one.user_message_id is None and one.answer_message_id is None
    assert one.turn.answer_ids == two.turn.answer_ids  # no history carried over


def test_follow_ups_continue_the_unsaved_conversation_until_reset(engine, image):
    service = ConversationService(engine)
    one = service.ask(AskRequest("First?", (image,), SETTINGS, where=FollowUp()))
    two = service.ask(AskRequest("Second?", (), SETTINGS, where=FollowUp()))
    assert two.turn.answer_ids == fresh_answer_ids(engine, [one.turn], "Second?", [])
    service.reset()
    three = service.ask(AskRequest("Second?", (), SETTINGS, where=FollowUp()))
    assert three.turn.answer_ids == fresh_answer_ids(engine, [], "Second?", [])


def test_the_callers_history_is_the_conversation(engine, image):
    service = ConversationService(engine)
    one = service.ask(AskRequest("First?", (image,), SETTINGS))
    two = service.ask(AskRequest("Second?", (), SETTINGS, where=GivenTurns((one.turn,))))
    assert two.turn.answer_ids == fresh_answer_ids(engine, [one.turn], "Second?", [])
    assert two.answer.stats.images_encoded == 0  # the image's embedding was cached


def test_given_turns_leave_the_stored_chat_held_for_its_next_question(engine, store, image):
    """Issue 37: a Local API request (turns its caller gives) took the app's chat out of the
    engine's KV state, so the chat's next question read the whole chat again. Given turns are
    answered in a lane of their own: the chat's next question feeds only itself."""

    def second_after(between) -> tuple:
        service = ConversationService(engine, store)
        chat = ChatHandle()
        first = service.ask(AskRequest("First?", (image,), SETTINGS, where=StoredChat(chat)))
        assert first.holds == chat.id == service.holds is not None
        between(service)
        second = service.ask(AskRequest("Second?", (), SETTINGS, where=StoredChat(chat)))
        assert second.holds == service.holds == chat.id
        return first, second

    given: list = []
    other = load_image(ImageOps.mirror(image.image))

    def api_request(service: ConversationService) -> None:
        given.append(service.ask(AskRequest("Hello", (other,), SETTINGS, where=GivenTurns(()))))
        assert given[0].answer.ok and given[0].holds == service.holds  # the chat stays held

    _, alone = second_after(lambda _service: None)
    first, second = second_after(api_request)
    # What the engine read for the second question: as much as with no request in between,
    # a small part of the chat (the question and the turn's ends).
    read = second.answer.stats.input_tokens
    assert read == alone.answer.stats.input_tokens < second.answer.stats.context_tokens // 3
    assert second.turn.answer_ids == fresh_answer_ids(engine, [first.turn], "Second?", [])
    # The caller's conversation kept its own state too: its follow-up feeds only what is new.
    follow = ConversationService(engine, store).ask(
        AskRequest("More?", (), SETTINGS, where=GivenTurns((given[0].turn,)))
    )
    assert follow.answer.stats.input_tokens < follow.answer.stats.context_tokens // 3


def test_what_the_service_holds_follows_preparations_failures_and_forgetting(engine, store, image):
    service = ConversationService(engine, store)
    chat = ChatHandle()
    assert (
        service.ask(AskRequest("First?", (image,), SETTINGS, where=StoredChat(chat))).holds
        == chat.id
    )
    engine.reset()  # e.g. another app's engine: the service is told nothing
    later = ConversationService(engine, store)
    assert later.holds is None
    preparation = later.prepare(PrepareRequest((), SETTINGS, conversation_id=chat.id))
    assert preparation.status == "ready" and later.holds == chat.id
    later.forget(chat.id)
    assert later.holds is None
    later.prepare(PrepareRequest((), SETTINGS, conversation_id=chat.id))
    bad = GenerationSettings(max_new_tokens=8, json_schema={"type": "nonsense"})
    failed = later.ask(AskRequest("Second?", (), bad, where=StoredChat(chat)))
    assert failed.answer.error and failed.holds is None  # a failed ask empties the state
    later.prepare(PrepareRequest((), SETTINGS, conversation_id=chat.id))
    assert later.holds == chat.id
    assert all(answer.ok for answer in later.ask_each("What is it?", [image], SETTINGS))
    assert later.holds is None  # a batch empties the state too


def test_a_prepared_question_feeds_only_the_question_and_answers_the_same(engine, image):
    service = ConversationService(engine)
    other = load_image(ImageOps.mirror(image.image))
    expected = fresh_answer_ids(engine, [], "Total?", [other])
    preparation = service.prepare(PrepareRequest((other,), SETTINGS, follow_up=True))
    assert preparation is not None and preparation.status == "ready"
    result = service.ask(AskRequest("Total?", (other,), SETTINGS, where=FollowUp()))
    assert result.turn.answer_ids == expected
    assert result.answer.stats.input_tokens < 16  # the question and the assistant header


def test_without_an_engine_the_question_is_kept_with_its_error_for_a_retry(store, image):
    """A question asked while no model (or no server) is there survives a restart, with the
    error its Retry answers (issue 37: it was gone)."""
    service = ConversationService(None, store)
    chat = ChatHandle()
    result = service.ask(
        AskRequest("Hi?", (image,), SETTINGS, where=StoredChat(chat), preset="json")
    )
    assert result.answer.error == service.no_model
    assert result.answer.error_kind is ErrorKind.NO_MODEL
    question, error = store.messages(chat.id)
    assert (question.text, question.asked.preset, question.asked.settings) == (
        "Hi?",
        "json",
        SETTINGS,
    )
    assert (question.id, error.id) == (result.user_message_id, result.answer_message_id)
    assert (error.role, error.text, error.error_kind) == (
        Role.ERROR,
        service.no_model,
        ErrorKind.NO_MODEL,
    )
    service.set_engine(None, "The model in /m could not be loaded: broken.")
    assert service.ask(AskRequest("Hi?")).answer.error.startswith("The model in /m")
    assert service.prepare(PrepareRequest((image,))) is None


class Unreadable:
    name, digest = "gone.png", "0" * 64

    def load(self) -> LoadedImage:
        raise ImageError("gone.png could not be read: the file is gone.")


def test_an_image_that_cannot_be_read_is_the_answers_error(engine, store):
    service = ConversationService(engine, store)
    result = service.ask(
        AskRequest("Hi?", (Unreadable(),), SETTINGS, where=StoredChat(ChatHandle()))
    )
    assert result.answer.error == "gone.png could not be read: the file is gone."
    preparation = service.prepare(PrepareRequest((Unreadable(),)))
    assert preparation.status == "error" and "gone.png" in preparation.error


def test_a_cancel_before_the_start_stops_without_generating(engine, store, image):
    cancel = threading.Event()
    cancel.set()
    chat = ChatHandle()
    result = ConversationService(engine, store).ask(
        AskRequest("Hi?", (image,), SETTINGS, where=StoredChat(chat)), cancel
    )
    assert result.answer.finish_reason == "stopped" and result.turn is None
    assert [m.role for m in store.messages(chat.id)] == ["user", "assistant"]


def test_a_history_that_cannot_be_written_still_gets_its_answer(engine, store, image, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise HistoryError("Could not save the chat: disk full.")

    monkeypatch.setattr(store, "add_message", refuse)
    result = ConversationService(engine, store).ask(
        AskRequest("Hi?", (image,), SETTINGS, where=StoredChat(ChatHandle()))
    )
    assert result.answer.ok and result.save_error == "Could not save the chat: disk full."
    assert result.user_message_id is None and result.answer_message_id is None
