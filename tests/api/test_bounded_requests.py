"""One request cannot block the API (issue 59): a chat sent back with 50,000 short turns (4.6 MB)
is refused at once while another client's answer is under way, one of 2,000 turns is answered
in seconds (fitting is bounded by the context), and stopping the server answers a client whose
job the engine never finishes. Real HTTP clients against the real server on loopback."""

from __future__ import annotations

import json
import threading
import time

import openai
import pytest
from api_support import http_call, start_api, user_message

from desktop.core.api.errors import ApiError
from desktop.core.api.jobs import EngineJob
from desktop.core.api.messages import CONTEXT_TOKENS, MIN_QUESTION_TOKENS, MIN_TURN_TOKENS
from desktop.core.engine.sequence import TokenSequence

WITHIN_S = 5.0


def chat_of(turns: int, question: str = "And now?") -> list[dict]:
    messages: list[dict] = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"Is {i} right?"})
        messages.append({"role": "assistant", "content": f"Yes, {i}."})
    return [*messages, {"role": "user", "content": question}]


class HeldFirstAnswer:
    """The server's first answer waits after its first words until the test lets it go: the
    engine is busy serving that client meanwhile (no timing involved)."""

    def __init__(self, api) -> None:
        self.speaking, self.release = threading.Event(), threading.Event()
        runner = api.server.routes.runner
        self._original, self._runner = runner.run, runner
        runner.run = self.run

    def run(self, service, call, emit, cancel):
        self._runner.run = self._original  # later calls run as they are

        def emit_then_hold(text: str) -> None:
            emit(text)
            self.speaking.set()
            self.release.wait(60)

        return self._original(service, call, emit_then_hold, cancel)


def test_fifty_thousand_turns_are_refused_at_once_while_another_client_is_served(
    api, sample_image
) -> None:
    held = HeldFirstAnswer(api)
    other: list = []
    client = threading.Thread(
        target=lambda: other.append(
            api.client().chat.completions.create(
                model="desklens", messages=[user_message("Describe it.", sample_image)],
                max_tokens=6,
            )
        )
    )  # fmt: skip
    client.start()
    try:
        assert held.speaking.wait(60)
        messages = chat_of(50_000)
        assert len(json.dumps(messages)) > 4_500_000
        started = time.monotonic()
        status, _, body = http_call(
            api, "POST", "/chat/completions", {"model": "desklens", "messages": messages}
        )
        took = time.monotonic() - started
    finally:
        held.release.set()
        client.join(60)
    assert status == 400 and took < WITHIN_S, (status, took)
    error = body["error"]
    assert error["code"] == "context_length_exceeded" and error["param"] == "messages"
    assert "50,001 turns" in error["message"] and f"{CONTEXT_TOKENS:,}-token" in error["message"]
    [answer] = other  # the client served meanwhile got its whole answer
    assert answer.choices[0].message.content and answer.usage.completion_tokens >= 1


@pytest.mark.parametrize("stream", [False, True])
def test_the_openai_client_gets_the_refusal_as_a_400_streamed_or_not(client, stream) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model="desklens", messages=chat_of(2_100), max_tokens=4, stream=stream
        )
    assert "too long for the model" in str(refused.value)


def test_more_text_than_the_context_can_hold_is_refused_before_it_is_read(api) -> None:
    question = "word " * (CONTEXT_TOKENS * 128 // 5 + 1)  # 2 MB: 128 characters a token at most
    started = time.monotonic()
    status, _, body = http_call(
        api, "POST", "/chat/completions",
        {"model": "desklens", "messages": [{"role": "user", "content": question}]},
    )  # fmt: skip
    assert status == 400 and time.monotonic() - started < WITHIN_S
    assert body["error"]["code"] == "context_length_exceeded"


def test_two_thousand_turns_are_answered_in_seconds_with_the_oldest_left_out(
    tiny_ir, tmp_path
) -> None:
    """A model of a 2,048-token context (the prefill of 60 % of 16,384 tokens alone takes
    seconds on two cores): what is timed is fitting 2,000 turns, not the model's speed."""
    from desktop.core.engine import EngineConfig, VLMEngine
    from devkit.tiny_models import EXACT

    engine = VLMEngine.load(tiny_ir, EngineConfig(**EXACT, max_context_tokens=2048))
    running = start_api(engine, tmp_path)
    try:
        started = time.monotonic()
        status, _, body = http_call(
            running, "POST", "/chat/completions",
            {"model": "desklens", "messages": chat_of(2_000), "max_tokens": 4},
        )  # fmt: skip
        took = time.monotonic() - started
    finally:
        running.stop()
    assert status == 200 and took < WITHIN_S, (status, took, body)
    assert 0 < body["usage"]["prompt_tokens"] <= 2048 * 0.6
    assert body["usage"]["completion_tokens"] >= 1


def test_the_least_a_turn_costs_is_what_the_refusal_counts(engine) -> None:
    """The refusal's bound may never refuse what fits: an empty turn costs at least as much."""
    seq = TokenSequence(engine.codec.special, engine.codec.encode)
    seq.add_user_turn("", [])
    assert len(seq) >= MIN_QUESTION_TOKENS
    seq.add_answer([])
    assert len(seq) >= MIN_TURN_TOKENS


def test_stopping_answers_a_client_whose_job_the_engine_never_finishes(engine, tmp_path) -> None:
    from desktop.cli.api_serve import OWNER_STOP_S, RunningApi

    running = start_api(engine, tmp_path)
    stuck, release = threading.Event(), threading.Event()
    assert running.owner is not None
    # A job that heeds no cancel, as a long prefill does: the owner thread is taken by it.
    running.owner.queue.put(EngineJob(lambda service: (stuck.set(), release.wait(60))))
    replies: list = []
    waiting = threading.Thread(
        target=lambda: replies.append(
            http_call(running, "POST", "/chat/completions",
                      {"model": "desklens", "messages": chat_of(1), "max_tokens": 2})
        )
    )  # fmt: skip
    waiting.start()
    try:
        assert stuck.wait(60)
        started = time.monotonic()
        RunningApi(running.server, running.owner).stop()  # what SIGTERM does
        waiting.join(30)
        assert time.monotonic() - started < OWNER_STOP_S + 3
    finally:
        release.set()
        running.stop()
    [(status, _, body)] = replies
    assert status == 503 and body["error"]["code"] == "server_stopping"


def test_user_messages_in_a_row_are_one_turn_and_system_messages_none() -> None:
    from desktop.core.api.messages import parse_chat

    one_turn = [{"role": "user", "content": "a"}] * 2_100
    assert len(parse_chat({"model": "m", "messages": one_turn}).history) == 0
    with_system = [{"role": "system", "content": "Be brief."}] * 2_100 + chat_of(1)
    assert len(parse_chat({"model": "m", "messages": with_system}).history) == 1
    with pytest.raises(ApiError) as refused:
        parse_chat({"model": "m", "messages": chat_of(2_100)})
    assert refused.value.status == 400 and "2,101 turns" in refused.value.message
