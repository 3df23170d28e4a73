"""KV lanes (issue 37): the app's chat and the Local API's requests each keep their own KV
state in the one engine, so a request of the one never makes the other read itself again."""

from __future__ import annotations

import copy

import pytest
from PIL import ImageOps

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.conversation.engine_protocol import Lane
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.images import load_image
from devkit.tiny_models import EXACT

SETTINGS = GenerationSettings(max_new_tokens=8)


@pytest.fixture(scope="module")
def engine(tiny_ir_fp32):
    return VLMEngine.load(tiny_ir_fp32, EngineConfig(**EXACT))


def prompt_tokens(answer) -> int:
    return answer.stats.context_tokens - answer.stats.generated_tokens


def test_each_lane_keeps_its_own_state_and_answers_as_a_fresh_engine(engine, sample_image):
    image = load_image(sample_image)
    other = load_image(ImageOps.mirror(sample_image))
    engine.use_lane(Lane.OWN)
    engine.reset()
    chat = Conversation()
    assert engine.ask(chat, "First?", [image], SETTINGS).ok
    held = engine.language.kv_length
    before = copy.copy(chat.turns)

    engine.use_lane(Lane.GIVEN)  # made now: it holds nothing yet
    assert engine.language.kv_length == 0
    api = Conversation()
    assert engine.ask(api, "Other?", [other], SETTINGS).ok
    api_held = engine.language.kv_length
    engine.use_lane(Lane.GIVEN)  # the current lane again: nothing changes
    assert engine.language.kv_length == api_held

    engine.use_lane(Lane.OWN)  # the chat's state is as its answer left it
    assert engine.language.kv_length == held
    second = engine.ask(chat, "Second?", [], SETTINGS)
    assert second.ok and second.stats.input_tokens * 2 < prompt_tokens(second)

    engine.reset()  # the chat's lane only: the API's follow-up still feeds only itself
    engine.use_lane(Lane.GIVEN)
    assert engine.language.kv_length == api_held
    more = engine.ask(api, "More?", [], SETTINGS)
    assert more.stats.input_tokens * 2 < prompt_tokens(more)

    # The answer read over a parked and resumed state is a fresh engine's, token for token.
    engine.use_lane(Lane.OWN)
    engine.reset()
    fresh = Conversation(list(before))
    engine.ask(fresh, "Second?", [], SETTINGS)
    assert fresh.turns[-1].answer_ids == chat.turns[-1].answer_ids
