"""The pruning decision against the reference's unit-by-unit loop, and how the engine keys,
batches and counts pruned images (tiny f32 model)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image, ImageDraw

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.pruning import keep_mask, kept_patch_rows, kept_units, unit_grid
from desktop.core.engine.vision import prepare_image
from desktop.core.images import load_image
from devkit.pruned_reference import keep_units_loop
from devkit.tiny_models import EXACT

SHORT = GenerationSettings(max_new_tokens=6, ignore_eos=True)


@pytest.fixture(scope="module")
def engine(tiny_ir_fp32):
    return VLMEngine.load(tiny_ir_fp32, EngineConfig(**EXACT))


def tiled(rng: np.random.Generator, rows: int, cols: int, unit: int = 32) -> np.ndarray:
    """An image of rows x cols units, each one of three patterns: many equal neighbours, in
    every arrangement (edges, corners, runs)."""
    patterns = rng.integers(0, 256, (3, unit, unit, 3), dtype=np.uint8)
    choice = rng.integers(0, 3, (rows, cols))
    return patterns[choice].transpose(0, 2, 1, 3, 4).reshape(rows * unit, cols * unit, 3)


@pytest.mark.parametrize("seed", range(12))
def test_the_vectorised_rule_equals_the_references_loop(seed):
    import torch

    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    pixels = tiled(rng, rows, cols)
    units = unit_grid(pixels, 32)
    as_patches = torch.from_numpy(units.reshape(rows * cols, -1).view(np.uint8).astype(np.int16))
    expected = keep_units_loop(as_patches, (1, rows * 2, cols * 2))
    assert kept_units(pixels, 32).tolist() == expected
    assert keep_mask(units).sum() == len(expected)


def test_the_decision_on_prepared_patches_equals_the_one_on_pixels(sample_image):
    """Comparing 8-bit resized pixels decides as comparing the normalised patches would."""
    import torch

    from desktop.core.engine.vision import VisionSpec

    spec = VisionSpec(16, 2, 2, 48, 16, (0.5,) * 3, (0.5,) * 3, 64 * 1024, 1280 * 1024)
    for image in (sample_image, sample_image.resize((1000, 700)), Image.new("RGB", (300, 300))):
        prepared = prepare_image(image, spec)
        patches = torch.from_numpy(prepared.pixel_patches)
        assert kept_units(prepared.pixels, 32).tolist() == keep_units_loop(patches, prepared.grid)


def test_kept_units_keep_their_four_patch_rows_in_order():
    assert kept_patch_rows(np.array([0, 3]), 2).tolist() == [0, 1, 2, 3, 12, 13, 14, 15]


def test_a_flat_image_keeps_one_unit_and_a_stripe_one_per_edge():
    white = np.full((256, 320, 3), 255, np.uint8)
    assert kept_units(white, 32).tolist() == [0]
    striped = white.copy()
    striped[:, 96:128] = 0  # a dark column: its top unit and the unit right of it stay
    assert kept_units(striped, 32).tolist() == [0, 3, 4]


def page() -> Image.Image:
    image = Image.new("RGB", (352, 256), "white")
    ImageDraw.Draw(image).text((20, 60), "Invoice 42: 99.50 EUR", fill="black")
    return image


def test_the_cache_key_includes_the_mode(engine):
    image = load_image(page())
    off = GenerationSettings(max_new_tokens=2, skip_repeats=False)
    first = engine.ask(Conversation(), "Total?", [image], SHORT)
    full = engine.ask(Conversation(), "Total?", [image], off)
    again = engine.ask(Conversation(), "Total?", [image], SHORT)
    assert first.stats.images_encoded == full.stats.images_encoded == 1  # not the pruned one
    assert again.stats.images_cached == 1 and again.stats.visual_tokens == first.stats.visual_tokens
    assert first.stats.visual_tokens < full.stats.visual_tokens == full.stats.visual_tokens_full
    pruned_key = engine.encoder.cached(image.digest, True).key
    assert pruned_key != engine.encoder.cached(image.digest, False).key
    assert first.stats.image_tokens() == f"{first.stats.visual_tokens} of 88 image tokens kept"
    assert full.stats.image_tokens() == "88 image tokens"


def test_batched_pruned_answers_equal_one_at_a_time_and_count_kept_tokens(engine, sample_image):
    requests = [
        ("Extract the text.", [load_image(page())]),
        ("Describe.", [load_image(sample_image)]),
    ]
    one_by_one = [engine.ask(Conversation(), q, imgs, SHORT) for q, imgs in requests]
    together = engine.ask_each(requests, SHORT)
    assert [a.text for a in together] == [a.text for a in one_by_one]
    for alone, batched in zip(one_by_one, together, strict=True):
        assert batched.stats.visual_tokens == alone.stats.visual_tokens
        assert batched.stats.visual_tokens < batched.stats.visual_tokens_full
    full = engine.ask_each(requests, GenerationSettings(max_new_tokens=6, skip_repeats=False))
    assert [a.stats.visual_tokens for a in full] == [a.stats.visual_tokens_full for a in together]


def test_json_answers_with_pruning_parse(engine):
    schema = {
        "type": "object",
        "properties": {"paid": {"type": "boolean"}, "total": {"type": "number"}},
        "required": ["paid", "total"],
        "additionalProperties": False,
    }
    settings = GenerationSettings(max_new_tokens=60, json_schema=schema)
    answer = engine.ask(Conversation(), "Fields as JSON.", [load_image(page())], settings)
    assert answer.finish_reason == "eos", answer
    data = json.loads(answer.text)
    assert set(data) == {"paid", "total"} and isinstance(data["paid"], bool)
    assert answer.stats.visual_tokens < answer.stats.visual_tokens_full
