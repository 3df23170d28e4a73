"""Prompt fitting keeps the same newest turns as dropping them one at a time did, and its work
is bounded by the context, not by the number of turns a caller sends (issue 59)."""

from __future__ import annotations

import pytest

from desktop.core.chat import AnswerStats, Turn, Unanswerable
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.prompt import RETAIN_AFTER_OVERFLOW, PromptBuilder


@pytest.fixture(scope="module")
def small(tiny_ir) -> VLMEngine:
    return VLMEngine.load(tiny_ir, EngineConfig(max_context_tokens=600, warm_up=False))


def turns(count: int, answer_ids: list[int] | None = None) -> list[Turn]:
    return [
        Turn(f"Question {i}: what does line {i * 7} say?", [], f"It says {i}.", answer_ids or [])
        for i in range(count)
    ]


def dropped_one_at_a_time(builder: PromptBuilder, history, question, budget) -> tuple[list, int]:
    """The former fit: rebuild the whole prompt after each dropped turn (quadratic)."""
    history, stats, limit = list(history), AnswerStats(), builder.max_context_tokens
    seq = builder.sequence(history, question, [], stats, True)
    dropped = 0
    if len(seq) + budget > limit:
        target = min(limit * RETAIN_AFTER_OVERFLOW, limit - budget)
        while history and len(seq) > target:
            history.pop(0)
            dropped += 1
            seq = builder.sequence(history, question, [], stats, True)
    return seq.ids, dropped


@pytest.mark.parametrize("count", [0, 1, 5, 17, 40, 300])
@pytest.mark.parametrize("budget", [1, 64, 400])
def test_the_same_turns_are_kept_as_dropping_one_at_a_time(small, count, budget):
    history = turns(count)
    fitted = small.prompts.fit(history, "And now?", [], budget, AnswerStats(), True)
    assert (fitted.sequence.ids, fitted.dropped_turns) == dropped_one_at_a_time(
        small.prompts, history, "And now?", budget
    )
    assert len(fitted.sequence) + min(budget, 1) <= 600


def test_answers_given_as_ids_are_fed_as_those_ids(small):
    history = turns(3, answer_ids=[5, 6, 7])
    fitted = small.prompts.fit(history, None, [], 8, AnswerStats(), True)
    assert fitted.dropped_turns == 0
    assert fitted.sequence.ids == small.prompts.sequence(history, None, [], AnswerStats(), True).ids
    assert fitted.sequence.ids.count(7) >= 3


def test_fitting_twenty_thousand_turns_encodes_only_what_the_context_can_hold(small):
    calls: list[int] = []
    tokenize = small.codec._tokenize
    small.codec._tokenize = lambda batch: calls.append(len(batch)) or tokenize(batch)
    try:
        fitted = small.prompts.fit(turns(20_000), "Last?", [], 64, AnswerStats(), True)
    finally:
        small.codec._tokenize = tokenize
    assert 0 < len(fitted.sequence) <= 600 * RETAIN_AFTER_OVERFLOW
    assert fitted.dropped_turns > 19_900
    # One batch of turns measured (the context holds far fewer than a batch), then the rest.
    assert len(calls) <= 6 and sum(calls) <= 2 * 256 + 8, calls


def test_a_question_longer_than_the_context_is_still_refused(small):
    with pytest.raises(Unanswerable, match="600-token context"):
        small.prompts.fit(turns(3), "word " * 2000, [], 1, AnswerStats(), True)


def test_many_texts_encode_as_each_does_alone(small):
    texts = ["", "a", "héllo 日本 <|im_end|>", "x" * 5000, *(f"turn {i}" for i in range(300))]
    found = small.codec.encode_many(texts)
    assert all(found[text] == small.codec.encode(text) for text in texts)
