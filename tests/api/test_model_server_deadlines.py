"""A model server that holds its client without saying anything useful (issue 59): keep-alive
comments or empty deltas without end, a word now and then for ever, headers a byte at a time, a
gzip body of a 400 MB line, a 1 MB header, numeric model ids, a `usage` of 1e308. Each answer
ends in a sentence, within its deadline, with memory bounded; a real server on loopback."""

from __future__ import annotations

import os
import time
import tracemalloc
from collections.abc import Iterator

import pytest
from cli_runner import desklens
from trickling_server import MODEL, Trickling, _gzip_line

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService
from desktop.core.remote.config import ServerConfig
from desktop.core.remote.engine import RemoteEngine, list_models, make_client


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[Trickling]:
    with Trickling(request.param) as running:
        yield running


def ask(server: Trickling, *, read_timeout_s: float = 60.0, **limits: float):
    config = ServerConfig(server.url, "key", MODEL)
    engine = RemoteEngine(config, make_client(config, read_timeout_s=read_timeout_s), **limits)
    try:
        request = AskRequest("What is this?", (), GenerationSettings(max_new_tokens=1000))
        return ConversationService(engine).ask(request).answer
    finally:
        engine.close()


@pytest.mark.parametrize(
    ("server", "limits", "said"),
    [
        ("keep-alive", {"first_word_s": 1.5}, "sent no word of its answer within 1.5 s"),
        ("empty-deltas", {"first_word_s": 1.5}, "sent no word of its answer within 1.5 s"),
        ("word-then-empty", {"silence_s": 1.5}, "fell silent for 1.5 s in the middle"),
        ("steady", {"deadline_s": 1.5}, "took more than 1.5 s for the answer"),
    ],
    indirect=["server"],
)
def test_a_server_that_says_nothing_new_meets_a_deadline(server: Trickling, limits, said):
    started = time.monotonic()
    answer = ask(server, **limits)  # the read timeout (60 s) never runs out: bytes keep coming
    assert time.monotonic() - started < 10
    reason = answer.error or answer.cut_off
    assert reason is not None and said in reason, answer
    assert reason.startswith("The server at 127.0.0.1") and answer.finish_reason != "length"


@pytest.mark.parametrize("server", ["slow-headers"], indirect=True)
def test_headers_a_byte_at_a_time_must_all_come_within_the_read_timeout(server: Trickling):
    started = time.monotonic()
    answer = ask(server, read_timeout_s=1.5)  # every byte comes well within it
    assert time.monotonic() - started < 10
    assert answer.error is not None and "did not answer in time" in answer.error, answer


@pytest.mark.parametrize("server", ["gzip-line"], indirect=True)
def test_a_gzip_body_is_capped_by_what_it_inflates_to(server: Trickling):
    _gzip_line()  # built before the count: the server's own bytes are not the client's
    tracemalloc.start()
    try:
        answer = ask(server)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert answer.error is not None and "a line longer than 1 MB" in answer.error, answer
    assert peak < 32 << 20, f"{peak >> 20} MB"  # 240 MB when the caps counted gzip bytes


@pytest.mark.parametrize("server", ["gzip-answer"], indirect=True)
def test_a_gzip_answer_of_a_well_behaved_server_is_read(server: Trickling):
    answer = ask(server)
    assert answer.text == "Hello world" and answer.error is None and answer.cut_off is None


@pytest.mark.parametrize("server", ["big-header"], indirect=True)
def test_a_one_megabyte_header_is_said_as_what_it_is_not_as_unreachable(server: Trickling):
    config = ServerConfig(server.url, "key", MODEL)
    with pytest.raises(Exception, match="not valid HTTP") as raised:
        list_models(config)
    assert "Could not reach" not in str(raised.value)


@pytest.mark.parametrize("server", ["numeric-ids"], indirect=True)
def test_numeric_model_ids_are_names_and_asked_for_as_strings(server: Trickling, tmp_path):
    assert list_models(ServerConfig(server.url, "key", "")) == ["5", MODEL]
    engine = RemoteEngine.connect(ServerConfig(server.url, "key", ""))
    engine.close()
    assert engine.config.model == "5"
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path), "DESKLENS_SERVER": ""}
    listed = desklens("models", "--server", server.url, env=env, timeout=60)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert listed.stdout.splitlines()[1:] == ["  5", f"  {MODEL}"]
    server.mode = "huge-usage"  # answers: the request's model must be the string "5"
    asked = desklens("ask", "-q", "Hi", "--server", server.url, env=env, timeout=60)
    assert asked.returncode == 0 and asked.stdout.strip() == "Hello", asked.stderr
    assert server.bodies[-1]["model"] == "5"


@pytest.mark.parametrize("server", ["huge-usage"], indirect=True)
def test_an_absurd_usage_is_not_taken_as_a_count(server: Trickling, tmp_path):
    answer = ask(server)
    assert answer.text == "Hello" and answer.stats.generated_tokens == 1
    assert answer.stats.tokens_per_s < float("inf") and answer.stats.context_tokens == 0
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path), "DESKLENS_SERVER": ""}
    asked = desklens("ask", "-q", "Hi", "--server", server.url, "--server-model", MODEL,
                     env=env, timeout=60)  # fmt: skip
    assert asked.returncode == 0 and "inf" not in asked.stdout + asked.stderr, asked
