"""Every way a model server can fail the remote engine, each by a small stand-in that
misbehaves on purpose (tests/support/misbehaving_server.py): each is one sentence, the key is
never in it, and what was read before a stream broke is kept, in the history too."""

from __future__ import annotations

import re
import socket

import pytest
from misbehaving_server import MODEL, StandInServer

from desktop.core.chat import ErrorKind, GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService, StoredChat
from desktop.core.history import HistoryStore
from desktop.core.history.handle import ChatHandle
from desktop.core.remote.config import ServerConfig
from desktop.core.remote.engine import RemoteEngine
from desktop.core.remote.errors import RemoteError

KEY = "sk-team-0123456789abcdef"


def ask(server: StandInServer, question: str = "What is this?"):
    engine = RemoteEngine(ServerConfig(server.url, KEY, MODEL))
    try:
        return ConversationService(engine).ask(AskRequest(question, (), GenerationSettings()))
    finally:
        engine.close()


@pytest.mark.parametrize(
    ("mode", "sentence"),
    [
        (
            "401",
            r"refused the key \(401\)\. Check the server key "
            r"\(Settings > Model, or DESKLENS_SERVER_KEY\)\.$",
        ),
        ("404", r"has no model named 'stand-in-vl' \(404\): Model 'stand-in-vl' not found\.$"),
        ("429", r"is busy \(429\): try again in 7 s\."),
        ("503", r"is not available right now \(503\): try again in 30 s\."),
    ],
)
def test_a_refusal_is_one_sentence_without_the_key(mode, sentence):
    with StandInServer(mode) as server:
        answer = ask(server).answer
        sent = server.requests[-1]
    assert answer.finish_reason == "error" and answer.text == ""
    assert answer.error is not None
    assert answer.error_kind is ErrorKind.NO_MODEL  # an API in front of it answers 503
    assert answer.error.startswith(f"The server at 127.0.0.1:{server.server_address[1]} ")
    assert re.search(sentence, answer.error), answer.error
    assert KEY not in answer.error and "\n" not in answer.error
    assert sent[2]["authorization"] == f"Bearer {KEY}"  # the key went only where it belongs


def test_a_wrong_key_is_said_before_the_first_question():
    with StandInServer("401") as server, pytest.raises(RemoteError, match=r"\(401\)"):
        RemoteEngine.connect(ServerConfig(server.url, KEY))


def test_a_stream_cut_midway_keeps_the_words_and_says_so(tmp_path):
    store = HistoryStore(tmp_path / "history")
    with StandInServer("cut") as server:
        engine = RemoteEngine(ServerConfig(server.url, KEY, MODEL))
        service = ConversationService(engine, store)
        request = AskRequest(
            "What is this?", (), GenerationSettings(), where=StoredChat(ChatHandle(title="cut"))
        )
        result = service.ask(request)
    assert result.answer.ok and result.answer.text == "Hello wor"
    assert result.answer.finish_reason == "stopped"
    assert result.notes == (
        f"The answer was cut off: The server at {engine.config.host} closed the stream before "
        "the answer was complete.",
    )
    stored = store.messages(result.request.chat.id)  # the question, the partial answer, the note
    assert [m.role for m in stored] == ["user", "assistant", "note"]
    assert stored[1].text == "Hello wor" and stored[1].stopped
    assert stored[2].text == result.notes[0]
    assert service.conversation.turns[-1].answer == "Hello wor"  # a follow-up sends it back


def test_a_server_that_is_not_there_is_a_sentence():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(RemoteError, match=rf"^Could not reach the server at 127\.0\.0\.1:{port}"):
        RemoteEngine.connect(ServerConfig(f"http://127.0.0.1:{port}/v1", KEY))


def test_a_certificate_nobody_trusts_is_said_as_such(tmp_path):
    server = StandInServer("models")
    server.use_tls(tmp_path)
    with server, pytest.raises(RemoteError, match="certificate could not be verified") as caught:
        RemoteEngine.connect(ServerConfig(server.url, KEY))
    assert server.url.startswith("https://")
    assert KEY not in str(caught.value)


def test_a_server_without_a_model_list_is_asked_by_the_name_given():
    """Some servers answer GET /models with 404: with a model name the engine goes on (the
    first question checks it); without one the user is told to name it."""
    with StandInServer("no-list") as server:
        engine = RemoteEngine.connect(ServerConfig(server.url, KEY, "named-model"))
        assert engine.info.name == "named-model"
        engine.close()
        with pytest.raises(RemoteError, match="does not list its models; enter the name"):
            RemoteEngine.connect(ServerConfig(server.url, KEY))


def test_a_server_failing_for_its_own_reasons_is_a_failure_not_a_missing_model():
    with StandInServer("500") as server:
        answer = ask(server).answer
    assert answer.error_kind is ErrorKind.FAILED
    assert answer.error is not None and "(500)" in answer.error
