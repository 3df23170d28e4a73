"""The remote engine against a real server: DeskLens's own `serve --api` (the real server on
loopback, the tiny model on the real OpenVINO runtime), asked through the conversation service
as every front end asks. Greedy decoding makes the remote answer checkable: it must be the
very answer this computer's engine gives to the same conversation."""

from __future__ import annotations

import json
import sys
import threading
import time
from dataclasses import replace

import pytest
from api_support import data_url, hold_after_a_full_answer, start_api
from gui_support import text_image

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.conversation import (
    AskRequest,
    ConversationService,
    FollowUp,
    GivenTurns,
    StoredChat,
)
from desktop.core.images import load_image
from desktop.core.remote.config import ServerConfig
from desktop.core.remote.engine import RemoteEngine, list_models
from devkit.tiny_models import EXACT

QUESTION = "What does the screenshot say?"
SHORT = GenerationSettings(max_new_tokens=12)


@pytest.fixture(scope="module")
def local(tiny_ir):
    """A second engine on this side: the reference the server's answers must equal."""
    from desktop.core.engine import EngineConfig, VLMEngine

    return VLMEngine.load(tiny_ir, EngineConfig(**EXACT))


@pytest.fixture
def remote(api):
    engine = RemoteEngine.connect(ServerConfig(api.url, api.token))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def two_images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("remote-images")
    images = []
    for number, words in enumerate(["Invoice 2291 total 48.10", "Meeting moved to 3 pm"]):
        path = folder / f"shot{number}.png"
        text_image(words).save(path)
        images.append(load_image(path))
    return images


def test_connect_picks_the_servers_chat_model_and_says_where_it_runs(remote, engine, api):
    assert remote.info.name == engine.info.name  # the first listed, not "desklens-ocr"
    assert remote.info.server == f"127.0.0.1:{api.server.port}"
    assert remote.info.folder is None and remote.info.manifest is None
    assert list_models(ServerConfig(api.url, api.token)) == [engine.info.name, "desklens-ocr"]


def test_a_streamed_answer_equals_this_computers_answer(remote, local, two_images):
    chunks: list[str] = []
    service = ConversationService(remote)
    result = service.ask(AskRequest(QUESTION, (two_images[0],), SHORT), on_text=chunks.append)
    expected = ConversationService(local).ask(AskRequest(QUESTION, (two_images[0],), SHORT))
    assert result.answer.ok and result.answer.text
    assert "".join(chunks) == result.answer.text == expected.answer.text
    assert len(chunks) > 1  # streamed, not one block at the end
    stats = result.answer.stats
    assert stats.server == remote.info.server
    assert stats.generated_tokens == expected.answer.stats.generated_tokens
    assert result.answer.finish_reason == expected.answer.finish_reason


def test_two_images_and_a_follow_up_send_the_conversation_back(remote, local, two_images):
    """The second question's answer depends on the first turn and both images: the server
    answers exactly as a local engine that holds the whole conversation."""
    follow_up = "And the second one?"
    answers = []
    for engine in (remote, local):
        service = ConversationService(engine)
        first = service.ask(AskRequest(QUESTION, tuple(two_images), SHORT, where=FollowUp()))
        second = service.ask(AskRequest(follow_up, (), SHORT, where=FollowUp()))
        assert first.answer.ok and second.answer.ok
        assert len(service.conversation.turns) == 2
        answers.append((first.answer.text, second.answer.text))
    assert answers[0] == answers[1]


def test_a_json_schema_constrains_the_servers_answer(remote, two_images):
    schema = {
        "type": "object",
        "properties": {"total": {"enum": ["48.10", "12.00"]}},
        "required": ["total"],
        "additionalProperties": False,
    }
    settings = GenerationSettings(max_new_tokens=60, json_schema=schema)
    result = ConversationService(remote).ask(AskRequest("The total?", (two_images[0],), settings))
    assert result.answer.ok, result.answer.error
    assert json.loads(result.answer.text)["total"] in ("48.10", "12.00")


def test_the_token_limit_reaches_the_server(remote, two_images):
    settings = GenerationSettings(max_new_tokens=5)
    result = ConversationService(remote).ask(AskRequest(QUESTION, (two_images[0],), settings))
    assert result.answer.finish_reason == "length"
    assert result.answer.stats.generated_tokens == 5


def test_stop_ends_the_answer_on_the_server_too_and_keeps_the_words(engine, tmp_path, two_images):
    """Stop from another thread closes the stream; the server sees its client leave and stops
    decoding; the words that came stay, as a stopped answer."""
    api = start_api(engine, tmp_path)
    remote = RemoteEngine.connect(ServerConfig(api.url, api.token))
    try:
        held, _messages, full_tokens = hold_after_a_full_answer(api, two_images[0].image)
        first_words = threading.Event()
        results = []
        request = AskRequest("Go on.", (two_images[0],), GenerationSettings(max_new_tokens=2000))

        def ask() -> None:
            service = ConversationService(remote)
            results.append(service.ask(request, on_text=lambda _: first_words.set()))

        thread = threading.Thread(target=ask)
        thread.start()
        assert first_words.wait(120)
        wait_until_blocked_on_its_socket(thread)  # the server holds: nothing more comes
        remote.stop()
        thread.join(120)
        answer = results[0].answer
        assert answer.finish_reason == "stopped" and answer.ok and answer.text
        assert held.stopped_by_the_leave(full_tokens)
    finally:
        remote.close()
        api.stop()


def wait_until_blocked_on_its_socket(thread: threading.Thread) -> None:
    """Until the thread's innermost Python frame is httpcore's socket read (then a Stop that
    only closed the stream would leave it waiting for the server's next chunk)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(thread.ident or 0)
        code = frame.f_code if frame is not None else None
        if code is not None and code.co_name == "read" and "_backends" in code.co_filename:
            return
        time.sleep(0.01)
    raise AssertionError("the answer's thread never waited on its socket")


def test_what_only_a_local_engine_does_is_skipped(remote, two_images):
    preparation = remote.prepare(Conversation(), [two_images[0]])
    assert preparation.status == "skipped"
    answers = remote.ask_each([("Words?", [image]) for image in two_images], SHORT)
    assert [a.ok for a in answers] == [True, True]


def test_a_wrong_key_is_a_sentence_and_asks_nothing(api):
    from desktop.core.remote.errors import RemoteError

    with pytest.raises(RemoteError, match=r"refused the key \(401\)") as caught:
        RemoteEngine.connect(ServerConfig(api.url, "dl-wrong-key-" + "x" * 40))
    assert "wrong-key" not in str(caught.value)


def test_an_unknown_model_names_the_models_the_server_has(api, engine):
    from desktop.core.remote.errors import RemoteError

    with pytest.raises(RemoteError, match=f"no model named 'nope'.*{engine.info.name}"):
        RemoteEngine.connect(ServerConfig(api.url, api.token, model="nope"))


def test_a_repetition_penalty_and_ignore_eos_reach_the_server(remote, local, two_images):
    settings = GenerationSettings(max_new_tokens=12, repetition_penalty=1.3, ignore_eos=True)
    request = AskRequest(QUESTION, (two_images[1],), settings)
    far = ConversationService(remote).ask(request).answer
    near = ConversationService(local).ask(request).answer
    assert far.text == near.text
    assert far.stats.generated_tokens == 12 and far.finish_reason == "length"


def test_a_chat_answered_by_the_server_is_continued_after_reopening_by_either_engine(
    remote, local, api, two_images, tmp_path
):
    """A server's answers are stored as text (no token ids): a reopened chat replays them, so
    the server gets its history back, and this computer's engine, switched to, reads the
    answer's tokens from its text."""
    from api_support import user_message

    from desktop.core.chat import Turn
    from desktop.core.history import HistoryStore
    from desktop.core.history.handle import ChatHandle

    store = HistoryStore(tmp_path / "history")
    chat = ChatHandle(title="remote chat")
    first = ConversationService(remote, store).ask(
        AskRequest(QUESTION, (two_images[0],), SHORT, where=StoredChat(chat))
    )
    assert first.answer.ok and first.answer.text
    follow_up = "And then?"
    reopened = AskRequest(follow_up, (), SHORT, where=StoredChat(ChatHandle(chat.id, chat.title)))
    # Each engine as after a restart: the chat replayed from the store. This computer's engine
    # then asks the follow-up again in its place (rewound: as Edit and resend does).
    far_result = ConversationService(remote, store).ask(reopened)
    far = far_result.answer.text
    again = replace(
        reopened,
        where=StoredChat(
            reopened.where.chat,
            drops=(far_result.user_message_id, far_result.answer_message_id),
        ),
    )
    near_service = ConversationService(local, store)
    near = near_service.ask(again).answer.text
    assert len(near_service.conversation.turns) == 2  # the replayed turn and this one
    turn = near_service.conversation.turns[0]
    assert (turn.question, turn.answer, turn.answer_ids) == (QUESTION, first.answer.text, [])

    sent_by_hand = api.client().chat.completions.create(
        model="desklens",
        messages=[
            user_message(QUESTION, two_images[0].image),
            {"role": "assistant", "content": first.answer.text},
            {"role": "user", "content": follow_up},
        ],
        max_tokens=SHORT.max_new_tokens,
        temperature=0,
    )
    assert far == sent_by_hand.choices[0].message.content  # the server got the history
    history = (Turn(QUESTION, [two_images[0]], first.answer.text, []),)
    given = ConversationService(local).ask(
        AskRequest(follow_up, (), SHORT, where=GivenTurns(history))
    )
    assert near == given.answer.text  # what a caller giving the history as text gets


def test_why_the_server_refused_a_question_comes_back_as_its_kind_and_status(
    remote, engine, tmp_path
):
    """The server's refusal keeps its cause (from its status and error code, not its words):
    the history keeps it, and an API in front of the remote engine answers its own caller with
    the same status and code as the server it asks (issue 37)."""
    import openai
    from PIL import Image

    from desktop.core.chat import ErrorKind

    strip = load_image(Image.new("RGB", (4000, 10), "white"), name="strip.png")
    asked = ConversationService(remote).ask(AskRequest("What is it?", (strip,), SHORT))
    assert asked.answer.error_kind is ErrorKind.IMAGE, asked.answer
    looping = GenerationSettings(max_new_tokens=8, json_schema={"$ref": "#"})
    asked = ConversationService(remote).ask(AskRequest("Fields?", (), looping))
    assert asked.answer.error_kind is ErrorKind.SCHEMA, asked.answer

    front = start_api(remote, tmp_path / "front")
    try:
        client = front.client()
        content = [
            {"type": "image_url", "image_url": {"url": data_url(Image.new("RGB", (4000, 10)))}},
            {"type": "text", "text": "What is it?"},
        ]
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(
                model="any", messages=[{"role": "user", "content": content}], max_tokens=4
            )
    finally:
        front.stop()
    assert refused.value.code == "invalid_image", refused.value.body
