"""Preparing before the question (VLMEngine.prepare) on the full-precision tiny model: answers are
token for token those of an engine that never prepared, and the Send after a preparation feeds
only the question."""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass

import pytest
from PIL import ImageOps

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.images import load_image
from devkit.tiny_models import EXACT

SETTINGS = GenerationSettings(max_new_tokens=12)


@pytest.fixture(scope="module")
def engine(tiny_ir_fp32):
    # Small chunks, so that the tiny model's prompts span several of them.
    return VLMEngine.load(tiny_ir_fp32, EngineConfig(prefill_chunk_tokens=16, **EXACT))


@pytest.fixture
def images(sample_image):
    a = load_image(sample_image)
    b = load_image(ImageOps.mirror(sample_image).resize((200, 260)))
    return a, b


def reference(engine, conversation, question, images):
    """The answer ids of an engine with an empty KV state (nothing prepared, nothing reused)."""
    engine.reset()
    scratch = copy.copy(conversation)
    scratch.turns = list(conversation.turns)
    engine.ask(scratch, question, images, SETTINGS)
    ids = scratch.turns[-1].answer_ids
    engine.reset()
    return ids


def question_tokens(engine, prep) -> int:
    """What the ask after a complete preparation has left to feed: question to "assistant\n"."""
    return len(engine.last_sequence) - prep.held_tokens


def test_prepared_answer_equals_the_unprepared_one_and_feeds_only_the_question(engine, images):
    a, _ = images
    expected = reference(engine, Conversation(), "What is the total?", [a])
    conversation = Conversation()
    prep = engine.prepare(conversation, [a], SETTINGS)
    assert prep.status == "ready" and prep.stats.images_cached == 1  # the reference encoded it
    assert prep.held_tokens == engine.language.kv_length > prep.stats.visual_tokens > 0
    answer = engine.ask(conversation, "What is the total?", [a], SETTINGS)
    assert answer.ok and conversation.turns[-1].answer_ids == expected
    assert answer.stats.images_cached == 1 and answer.stats.images_encoded == 0
    assert answer.stats.input_tokens == question_tokens(engine, prep) < 20


@pytest.mark.parametrize(
    "prepared, asked",
    [("b", "a"), ("a", "none"), ("ab", "b"), ("ba", "ab")],
    ids=["other-image", "question-without-it", "two-prepares", "two-images-after-two"],
)
def test_answers_stay_exact_whatever_was_prepared(engine, images, prepared, asked):
    pick = {"a": [images[0]], "b": [images[1]], "ab": list(images), "none": []}
    expected = reference(engine, Conversation(), "Compare.", pick[asked])
    conversation = Conversation()
    for key in prepared:
        prep = engine.prepare(conversation, pick[key], SETTINGS)
        assert prep.status == "ready"
    answer = engine.ask(conversation, "Compare.", pick[asked], SETTINGS)
    assert answer.ok and conversation.turns[-1].answer_ids == expected
    if pick[asked] == pick[prepared[-1]]:
        assert answer.stats.input_tokens == question_tokens(engine, prep)


def test_reopened_history_is_prepared_and_the_follow_up_stays_exact(engine, images):
    a, _ = images
    conversation = Conversation()
    engine.ask(conversation, "What is the total?", [a], SETTINGS)
    engine.reset()  # as after a restart: the history is in the store, nothing in the KV state
    expected = reference(engine, conversation, "And the date?", [])
    prep = engine.prepare(conversation, [], SETTINGS)
    assert prep.status == "ready" and prep.stats.input_tokens == prep.held_tokens > 0
    answer = engine.ask(conversation, "And the date?", [], SETTINGS)
    assert conversation.turns[-1].answer_ids == expected
    assert answer.stats.input_tokens == question_tokens(engine, prep)


def test_cancel_between_chunks_keeps_what_was_fed_and_the_send_continues(engine, images):
    a, _ = images
    expected = reference(engine, Conversation(), "What is the total?", [a])
    cancel = threading.Event()
    real_feed = engine.language.feed
    fed: list[int] = []

    def feed_then_cancel(embeds, *args, **kwargs):
        fed.append(embeds.shape[0])
        if len(fed) == 2:
            cancel.set()  # as a Send, a removed image or a switched chat would
        return real_feed(embeds, *args, **kwargs)

    conversation = Conversation()
    engine.language.feed = feed_then_cancel
    try:
        prep = engine.prepare(conversation, [a], SETTINGS, cancel)
    finally:
        del engine.language.feed
    assert prep.status == "cancelled" and len(fed) == 2  # not one chunk more
    assert prep.held_tokens == engine.language.kv_length == sum(fed)
    answer = engine.ask(conversation, "What is the total?", [a], SETTINGS)
    assert conversation.turns[-1].answer_ids == expected
    assert answer.stats.input_tokens == question_tokens(engine, prep)
    assert answer.stats.images_encoded == 0  # the vision result stayed in the cache


def test_cancel_before_prefill_feeds_nothing(engine, images):
    _, b = images
    engine.reset()
    cancel = threading.Event()
    cancel.set()
    prep = engine.prepare(Conversation(), [b], SETTINGS, cancel)
    assert prep.status == "cancelled" and engine.language.kv_length == 0
    assert engine.encoder.cached(b.digest, True) is not None  # the vision call is not wasted


@dataclass
class BrokenImage:
    digest: str = "broken-image"
    image: object = None  # not a picture: the encoder fails on it


def test_failed_preparation_leaves_nothing_behind_and_the_send_reports_it(engine, images):
    a, _ = images
    conversation = Conversation()
    engine.ask(conversation, "What is the total?", [a], SETTINGS)
    turns, held = list(conversation.turns), engine.language.kv_length
    prep = engine.prepare(conversation, [BrokenImage()], SETTINGS)
    assert prep.status == "error" and prep.error
    assert conversation.turns == turns and engine.language.kv_length == held
    answer = engine.ask(conversation, "And this?", [BrokenImage()], SETTINGS)
    assert not answer.ok and conversation.turns == turns
    expected = reference(engine, conversation, "And the date?", [])
    engine.ask(conversation, "And the date?", [], SETTINGS)
    assert conversation.turns[-1].answer_ids == expected
