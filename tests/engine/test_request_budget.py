"""A request's own visual-token budget (GenerationSettings.max_visual_tokens, the readability
guard's "More detail"): its images are resized into it, the engine's own budget comes back
after it, and the cache keeps the two readings apart."""

from __future__ import annotations

import pytest

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines

SHORT = GenerationSettings(max_new_tokens=2, ignore_eos=True)


@pytest.fixture(scope="module")
def engine(tiny_ir):
    return VLMEngine.load(tiny_ir, EngineConfig(max_visual_tokens=64))


def test_a_request_reads_its_images_at_its_own_budget_and_the_engine_keeps_its_own(engine):
    page = load_image(render_lines(["Total 12,450.50"] * 4, size=10, width=1400, height=1000))
    own = engine.encoder.spec
    assert engine.info.vision == own  # what the app's readability guard predicts with
    detailed = GenerationSettings(max_new_tokens=2, ignore_eos=True, max_visual_tokens=400)

    first = engine.ask(Conversation(), "Total?", [page], SHORT)
    more = engine.ask(Conversation(), "Total?", [page], detailed)
    again = engine.ask(Conversation(), "Total?", [page], SHORT)

    assert first.ok and more.ok and again.ok
    assert first.stats.visual_tokens_full <= 64 < more.stats.visual_tokens_full <= 400
    assert more.stats.images_encoded == 1  # not the 64-token reading from the cache
    assert again.stats.images_cached == 1
    assert again.stats.visual_tokens_full == first.stats.visual_tokens_full
    assert engine.encoder.spec == own


def test_a_budget_stays_within_the_models_own_limits(engine):
    spec = engine.encoder.spec
    assert spec.with_budget(1).max_pixels == spec.min_pixels
    assert spec.with_budget(10**9).max_pixels == spec.ceiling_pixels
    assert spec.with_budget(400).max_pixels == 400 * spec.factor**2
