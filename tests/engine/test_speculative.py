"""Drafted (speculative) decoding on the full-precision tiny model: greedy answers are the same
token for token whatever the drafts are, and a stop mid-verification leaves a usable state."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.drafting import DraftStats
from devkit.tiny_models import EXACT

QUESTIONS = ["What is the total?", "Describe it.", "Extract all the text.", "Name the date."]


@pytest.fixture(scope="module")
def engine(tiny_ir_fp32):
    return VLMEngine.load(tiny_ir_fp32, EngineConfig(**EXACT))


class ScriptedDrafter:
    """Drafts from the known plain answer, spoiled as a strategy says: all right, all wrong,
    right then wrong from a given offset, or longer than the budget."""

    def __init__(self, truth: list[int], k: int, wrong_from: int | None, vocab: int):
        self.truth, self.k, self.wrong_from, self.vocab = truth, k, wrong_from, vocab
        self.stats = DraftStats()

    def propose(self, answer_ids):
        at = len(answer_ids)
        draft = list(self.truth[at : at + self.k])
        draft += [7] * (self.k - len(draft))  # past the plain answer's end (budget or eos)
        if self.wrong_from is not None:
            for i in range(min(self.wrong_from, len(draft)), len(draft)):
                draft[i] = (draft[i] + 1 + i) % self.vocab
        return draft

    def record(self, drafted: int, accepted: int) -> None:
        self.stats.drafted += drafted
        self.stats.accepted += accepted
        self.stats.steps += 1


def answer_ids(engine, question, images, gen, conversation=None) -> list[int]:
    conversation = conversation if conversation is not None else Conversation()
    answer = engine.ask(conversation, question, images, gen)
    assert answer.ok, answer.error
    return conversation.turns[-1].answer_ids if conversation.turns else []


def assert_state_lines_up(engine):
    """The engine's key per KV position matches the state: one per position, None exactly
    where a rejected draft is masked out."""
    holes = [key is None for key in engine._kv_keys]
    assert len(holes) == engine.language.kv_length
    assert holes == [not valid for valid in engine.language._valid]


def with_drafter(engine, monkeypatch, drafter):
    monkeypatch.setattr(engine, "_drafter", lambda *args: drafter)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    question=st.sampled_from(QUESTIONS),
    with_image=st.booleans(),
    k=st.integers(1, 12),
    wrong_from=st.one_of(st.none(), st.integers(0, 12)),
    budget=st.integers(1, 24),
    ignore_eos=st.booleans(),
)
def test_greedy_answers_equal_plain_decoding_whatever_the_drafts(
    engine, image, monkeypatch, question, with_image, k, wrong_from, budget, ignore_eos
):
    images = [image] if with_image else []
    gen = GenerationSettings(max_new_tokens=budget, ignore_eos=ignore_eos)
    engine.reset()
    plain = answer_ids(engine, question, images, replace(gen, draft=False))
    vocab = engine.last_prefill_logits.shape[0]
    drafter = ScriptedDrafter(plain, k, wrong_from, vocab)
    with monkeypatch.context() as patch:
        with_drafter(engine, patch, drafter)
        engine.reset()
        drafted = answer_ids(engine, question, images, gen)
    assert drafted == plain
    if wrong_from is None and len(plain) > 1:
        assert drafter.stats.accepted > 0  # right drafts are taken
    assert_state_lines_up(engine)


def plain_two_turns(engine, image, gen) -> tuple[list[int], list[int]]:
    """The answer ids of a two-turn chat decoded without drafts, from an empty state."""
    conversation = Conversation()
    engine.reset()
    first = answer_ids(engine, "Describe it.", [image], replace(gen, draft=False), conversation)
    second = answer_ids(engine, "And the total?", [], replace(gen, draft=False), conversation)
    engine.reset()
    return first, second


@pytest.mark.parametrize("compact_after", [128, 0], ids=["masked-kept", "compacted"])
def test_follow_up_after_drafted_answers_stays_exact(engine, image, monkeypatch, compact_after):
    import desktop.core.engine.engine as engine_module

    gen = GenerationSettings(max_new_tokens=16)
    first, second = plain_two_turns(engine, image, gen)
    drafted_conv = Conversation()
    engine.reset()
    with monkeypatch.context() as patch:
        patch.setattr(engine_module, "COMPACT_AFTER_HOLES", compact_after)
        with_drafter(engine, patch, ScriptedDrafter(first, 5, 2, 1000))
        assert answer_ids(engine, "Describe it.", [image], gen, drafted_conv) == first
    # Rejected drafts stay masked in the state (or were compacted away: no key is None) ...
    assert (engine.language.discarded > 0) == (compact_after > 0)
    assert (None in engine._kv_keys) == (compact_after > 0)
    follow = engine.ask(drafted_conv, "And the total?", [], gen)
    assert drafted_conv.turns[-1].answer_ids == second
    assert follow.stats.input_tokens < 30  # ... and the follow-up feeds only itself
    assert_state_lines_up(engine)


def test_stop_mid_verification_keeps_history_and_state_consistent(engine, image, monkeypatch):
    gen = GenerationSettings(max_new_tokens=24, ignore_eos=True)
    engine.reset()
    plain = answer_ids(engine, "Describe it.", [image], gen)
    real_feed = engine.language.feed

    def feed(*args, logits=1, **kwargs):
        if logits > 2:  # a verification call: Stop arrives while it runs
            engine.stop()
        return real_feed(*args, logits=logits, **kwargs)

    conversation = Conversation()
    engine.reset()
    with monkeypatch.context() as patch:
        with_drafter(engine, patch, ScriptedDrafter(plain, 4, 2, 1000))
        patch.setattr(engine.language, "feed", feed)
        answer = engine.ask(conversation, "Describe it.", [image], gen)
    assert answer.finish_reason == "stopped"
    turn = conversation.turns[-1]
    assert turn.stopped and turn.answer_ids == plain[: len(turn.answer_ids)]
    assert_state_lines_up(engine)
    # The follow-up from the kept state equals one from a fresh state.
    scratch = copy.copy(conversation)
    scratch.turns = list(conversation.turns)
    follow = answer_ids(engine, "And the total?", [], gen, conversation)
    engine.reset()
    assert answer_ids(engine, "And the total?", [], gen, scratch) == follow


def test_ocr_hints_are_drafted_from_and_change_nothing(engine, image):
    gen = GenerationSettings(max_new_tokens=20, ignore_eos=True)
    engine.reset()
    plain = answer_ids(engine, "Extract all the text.", [image], replace(gen, draft=False))
    # A hint that contains the plain answer's own text: the drafter finds it and it is accepted.
    hint = "Line 0: total 0.50 " + engine.codec.decode(plain) + " Line 4: total 28.50"
    engine.reset()
    conversation = Conversation()
    answer = engine.ask(conversation, "Extract all the text.", [image], gen, hints=[hint])
    assert conversation.turns[-1].answer_ids == plain
    assert answer.stats.drafted_tokens > 0 and answer.stats.accepted_tokens > 0


def test_sampling_never_drafts(engine, image):
    gen = GenerationSettings(max_new_tokens=12, temperature=0.8, seed=3, ignore_eos=True)
    engine.reset()
    answer = engine.ask(Conversation(), "Describe it.", [image], gen, hints=["Line 0: total"])
    assert answer.ok and answer.stats.drafted_tokens == 0


def test_json_answers_drafted_from_json_hints_stay_valid_and_equal(engine, image):
    schema = {
        "type": "object",
        "properties": {"total": {"type": "string"}, "date": {"type": "string"}},
        "required": ["total", "date"],
    }
    hint = json.dumps({"total": "28.50", "date": "2026-12-01"})
    results = []
    for draft in (False, True):
        gen = GenerationSettings(max_new_tokens=60, json_schema=schema, draft=draft)
        engine.reset()
        answer = engine.ask(Conversation(), "As JSON.", [image], gen, hints=[hint])
        assert answer.ok, answer.error
        results.append(answer)
    assert results[0].text == results[1].text
    if results[0].finish_reason == "eos":
        assert set(json.loads(results[1].text)) == {"total", "date"}
    assert results[1].stats.drafted_tokens > 0
