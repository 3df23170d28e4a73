"""The chat as data (issue 37): a `Transcript` read back from the store after a restart asks
Retry, Regenerate and Edit the way each question was asked: its own settings (a JSON preset's
answer stays JSON), its composed prompt, its images; what it replaces goes from the store."""

from __future__ import annotations

import json

from desktop.core.chat import ErrorKind, GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService, Ground, StoredChat
from desktop.core.conversation.transcript import Edit, EntryState, Means, Transcript
from desktop.core.history import AskedWith, HistoryStore, Role, StoredImage
from desktop.core.history.handle import ChatHandle
from desktop.core.history.ocr_text import OcrText
from desktop.core.images import LoadedImage, load_image

SCHEMA = {
    "type": "object",
    "properties": {"paid": {"type": "boolean"}, "currency": {"enum": ["EUR", "USD"]}},
    "required": ["paid", "currency"],
    "additionalProperties": False,
}
JSON_SETTINGS = GenerationSettings(max_new_tokens=60, json_schema=SCHEMA)
TODAYS = GenerationSettings(max_new_tokens=8)  # the app's defaults after the restart


class Stored:
    """A stored picture as a request's image (the GUI's ImageRef does the same)."""

    def __init__(self, store: HistoryStore, image: StoredImage) -> None:
        self._store, self._image = store, image
        self.name, self.digest = image.name, image.digest

    def load(self) -> LoadedImage:
        return self._store.load_image(self._image)


def reopened(folder, chat_id: int) -> tuple[HistoryStore, Transcript]:
    store = HistoryStore(folder)
    return store, Transcript.from_stored(store.messages(chat_id), lambda i: Stored(store, i))


def test_regenerate_on_a_reopened_chat_keeps_the_json_preset(engine, tmp_path, sample_image):
    folder = tmp_path / "history"
    image = load_image(sample_image)
    with HistoryStore(folder) as store:
        chat = ChatHandle()
        asked = AskRequest(
            "Extract", (image,), JSON_SETTINGS, where=StoredChat(chat), preset="json"
        )
        first = ConversationService(engine, store).ask(asked)
        assert json.loads(first.answer.text).keys() == {"paid", "currency"}
    engine.reset()
    store, transcript = reopened(folder, chat.id)  # a restarted app
    with store:
        question, answer = transcript.entries
        assert (question.role, question.text, question.asked.preset) == (
            Role.USER,
            "Extract",
            "json",
        )
        request = transcript.request_for(answer.id, ChatHandle(chat.id), Means(TODAYS))
        assert request.settings == JSON_SETTINGS and request.preset == "json"
        assert (request.where.user_message_id, request.where.drops) == (
            question.message_id,
            (answer.message_id,),
        )
        again = ConversationService(engine, store).ask(request)
        assert json.loads(again.answer.text).keys() == {"paid", "currency"}  # still JSON
        kept = store.messages(chat.id)
        assert [m.role for m in kept] == [Role.USER, Role.ASSISTANT]  # the old answer went
        assert kept[0].id == question.message_id and kept[1].id == again.answer_message_id
        assert kept[0].asked.settings == JSON_SETTINGS


def test_a_failed_question_survives_a_restart_and_its_retry_answers_it(
    engine, tmp_path, sample_image
):
    folder = tmp_path / "history"
    with HistoryStore(folder) as store:
        chat = ChatHandle()
        image = load_image(sample_image)
        request = AskRequest("Extract", (image,), JSON_SETTINGS, StoredChat(chat), preset="json")
        failed = ConversationService(None, store).ask(request)  # the server was down
        assert failed.answer.error_kind is ErrorKind.NO_MODEL
    store, transcript = reopened(folder, chat.id)
    with store:
        question, error = transcript.entries
        assert (error.role, error.state, error.error_kind) == (
            Role.ERROR, EntryState.FAILED, ErrorKind.NO_MODEL
        )  # fmt: skip
        retry = transcript.request_for(error.id, ChatHandle(chat.id), Means(TODAYS))
        assert retry.settings == JSON_SETTINGS and retry.where.drops == (error.message_id,)
        assert len(retry.images) == 1
        result = ConversationService(engine, store).ask(retry)
        assert result.answer.ok and json.loads(result.answer.text).keys() == {"paid", "currency"}
        roles = [m.role for m in store.messages(chat.id)]
        assert roles == [Role.USER, Role.ASSISTANT]  # the error went, the question stayed


def test_an_edit_is_composed_again_as_the_original_was_and_replaces_it(tmp_path, sample_image):
    with HistoryStore(tmp_path / "history") as store:
        chat_id = store.create_conversation("Chat")
        image = load_image(sample_image)
        ocr = OcrText("a.png", "Total 9", "Total **9**", "{}")
        store.add_message(chat_id, "ocr", ocr.text, [image], ocr=ocr.stored())
        asked = AskedWith(JSON_SETTINGS, None, grounded=True, system=True)
        prompt = "…\n\nQuestion: Total?"
        store.add_message(chat_id, "user", "Total?", [image], prompt=prompt, asked=asked)
        store.add_message(chat_id, "assistant", "{}", answer_ids=[1])
        transcript = Transcript.from_stored(store.messages(chat_id), lambda i: Stored(store, i))
    extraction, question, _answer = transcript.entries

    def ocr_engine():
        raise AssertionError("only handed on")

    means = Means(TODAYS, ocr_engine, "Be brief.")
    chat = ChatHandle(chat_id)
    edited = transcript.request_for(question.id, chat, means, Edit("Sum?", question.images))
    assert (edited.question, edited.settings, edited.where.drops) == (
        "Sum?", JSON_SETTINGS, (question.message_id, _answer.message_id)
    )  # fmt: skip
    assert isinstance(edited.context, Ground) and edited.context.ocr is ocr_engine
    assert edited.system == "Be brief."
    assert edited.where.user_message_id is None  # stored anew, in the old one's place
    assert edited.hints == ("Total 9", "Total **9**")  # drafted from the extraction shown
    # What the edit drops: the question and everything after it, extraction cards too.
    assert [e.role for e in transcript.from_entry(question.id)] == [Role.USER, Role.ASSISTANT]
    assert transcript.from_entry(extraction.id)[0].ocr == extraction.ocr


def test_entries_are_added_updated_and_dropped_by_id():
    transcript = Transcript()
    question = transcript.add(Role.USER, "Hi?", asked=AskedWith(JSON_SETTINGS))
    answer = transcript.add(Role.ASSISTANT, "Hello", state=EntryState.ANSWERED)
    chat = ChatHandle()
    assert transcript.request_for(answer.id, chat, Means(TODAYS)).question == "Hi?"  # not stored
    transcript.update(question.id, message_id=7, prompt="Be brief.\n\nQuestion: Hi?")
    transcript.update(answer.id, message_id=8)
    regenerate = transcript.request_for(answer.id, ChatHandle(1), Means(TODAYS))
    assert (regenerate.question, regenerate.typed) == ("Be brief.\n\nQuestion: Hi?", "Hi?")
    assert (regenerate.where.user_message_id, regenerate.where.drops) == (7, (8,))
    assert transcript.last_answer() == transcript.get(answer.id)
    assert [e.id for e in transcript.drop_from(answer.id)] == [answer.id]
    assert transcript.request_for(answer.id, chat, Means()) is None  # gone
    assert not transcript.has_answers()


def test_a_questions_own_image_detail_is_stored_and_asked_again(tmp_path, sample_image):
    """The readability guard's "More detail" is the question's own: Regenerate keeps it."""
    detailed = GenerationSettings(max_new_tokens=60, max_visual_tokens=2300)
    with HistoryStore(tmp_path / "history") as store:
        chat_id = store.create_conversation("Chat")
        image = load_image(sample_image)
        asked = AskedWith(detailed)
        store.add_message(chat_id, "user", "Total?", [image], prompt="Total?", asked=asked)
        store.add_message(chat_id, "assistant", "9", answer_ids=[1])
        transcript = Transcript.from_stored(store.messages(chat_id), lambda i: Stored(store, i))
    _question, answer = transcript.entries
    again = transcript.request_for(answer.id, ChatHandle(chat_id), Means(TODAYS))
    assert again is not None and again.settings.max_visual_tokens == 2300


def test_a_rewind_keeps_an_extraction_stored_after_the_user_dropped_the_turns(
    engine, tmp_path, sample_image
):
    """Edit or Regenerate drops what the user saw; an extraction that finished on its own
    thread between that and the engine's turn (stored after the answer) is not theirs to
    drop (the random session, seed 643070: the window showed it, the history had lost it)."""
    with HistoryStore(tmp_path / "history") as store:
        service, chat = ConversationService(engine, store), ChatHandle()
        image = load_image(sample_image)
        one = service.ask(AskRequest("Total?", (image,), TODAYS, StoredChat(chat)))
        transcript = Transcript.from_stored(store.messages(chat.id), lambda i: Stored(store, i))
        _question, answer = transcript.entries
        regenerate = transcript.request_for(answer.id, chat, Means(TODAYS))
        transcript.drop_from(answer.id)  # the view's part, then the extraction is stored
        ocr = OcrText("a.png", "Total 9", "Total **9**", "{}")
        late = store.add_message(chat.id, "ocr", ocr.text, [image], ocr=ocr.stored())
        again = service.ask(regenerate)
        kept = [(m.id, m.role) for m in store.messages(chat.id)]
    assert again.answer.ok and kept == [
        (one.user_message_id, Role.USER),
        (late.id, Role.OCR),
        (again.answer_message_id, Role.ASSISTANT),
    ]
