"""With pruning on, the engine equals PixelPrune applied the reference's way on transformers.

The reference (pruned_reference.py) decides with its own loop, runs transformers' vision tower on
the kept patches with full-grid position and rotary rows, and feeds transformers' language model
the full prompt's M-RoPE positions with the pruned slots dropped.
"""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageOps

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.vision import prepare_image
from desktop.core.images import load_image
from devkit.pruned_reference import full_prompt, generate_pruned
from devkit.tiny_models import EXACT

pytestmark = pytest.mark.slow

NEW_TOKENS = 12
LOGITS_ATOL = 1e-4  # fp32 vs fp32 with different kernels: rounding only


@pytest.fixture(scope="module")
def engine(tiny_ir_fp32):
    return VLMEngine.load(tiny_ir_fp32, EngineConfig(**EXACT))  # pruning on: the default


def document() -> Image.Image:
    """Large flat areas: a white page (multiples of 32 px: no resize), a toolbar, some text."""
    image = Image.new("RGB", (352, 256), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 351, 31), fill=(40, 70, 190))
    for row in range(4):
        draw.text((20, 60 + row * 40), f"Item {row}: {row * 13}.25 EUR", fill="black")
    draw.rectangle((200, 200, 330, 240), outline="black")
    return image


def noise(seed: int = 1, size: tuple[int, int] = (288, 256)) -> Image.Image:
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def one_repeat() -> Image.Image:
    """Noise with one merge unit (32x32) a copy of its left neighbour."""
    pixels = np.asarray(noise(2)).copy()
    pixels[64:96, 96:128] = pixels[64:96, 64:96]
    return Image.fromarray(pixels)


def compare(engine, hf_model, answer, conversation, images, new_tokens=NEW_TOKENS):
    """The last answer of `conversation` against the reference on the same conversation."""
    assert answer.ok, answer.error
    spec = engine.encoder.spec
    prepared = [prepare_image(x.image, spec) for x in images]
    seq = engine.last_sequence
    pad, eos = engine.codec.special.image_pad, engine.codec.special.im_end
    full = full_prompt(seq.ids, pad, prepared)
    tokens, logits, ids, positions = generate_pruned(hf_model, full, prepared, new_tokens, eos)
    assert seq.ids == ids  # one image pad per kept token, nothing else changed
    assert np.array_equal(seq.position_array(0, len(seq)), positions)  # gaps, full-image text
    turn = conversation.turns[-1]
    assert turn.answer_ids + ([eos] if answer.finish_reason == "eos" else []) == tokens
    np.testing.assert_allclose(engine.last_prefill_logits, logits, atol=LOGITS_ATOL)
    return answer


def ask(engine, conversation, question, images, **settings):
    options = GenerationSettings(max_new_tokens=NEW_TOKENS, **settings)
    return engine.ask(conversation, question, images, options)


def test_large_flat_areas_equal_the_reference(engine, hf_model):
    image = load_image(document())
    conversation = Conversation()
    answer = compare(
        engine, hf_model, ask(engine, conversation, "What is the total?", [image]),
        conversation, [image],
    )  # fmt: skip
    stats = answer.stats
    assert stats.visual_tokens_full == 88 and stats.visual_tokens < stats.visual_tokens_full / 2
    assert answer.stats.generated_tokens >= 3, "the test needs a real answer to compare"


def test_nothing_to_drop_equals_the_unpruned_engine_token_for_token(engine, hf_model):
    image = load_image(noise())
    pruned_conv, full_conv = Conversation(), Conversation()
    pruned = compare(
        engine, hf_model, ask(engine, pruned_conv, "Describe.", [image]), pruned_conv, [image]
    )
    pruned_logits = engine.last_prefill_logits
    full = ask(engine, full_conv, "Describe.", [image], skip_repeats=False)
    assert pruned.stats.visual_tokens == full.stats.visual_tokens == 72
    assert pruned_conv.turns[0].answer_ids == full_conv.turns[0].answer_ids
    assert np.array_equal(pruned_logits, engine.last_prefill_logits)


def test_one_repeated_unit_is_dropped(engine, hf_model):
    image = load_image(one_repeat())
    conversation = Conversation()
    answer = ask(engine, conversation, "Describe.", [image])
    compare(engine, hf_model, answer, conversation, [image])
    assert answer.stats.visual_tokens == answer.stats.visual_tokens_full - 1 == 71


def test_an_all_white_image_keeps_one_unit(engine, hf_model):
    image = load_image(Image.new("RGB", (320, 256), "white"))
    conversation = Conversation()
    answer = ask(engine, conversation, "What is this?", [image])
    compare(engine, hf_model, answer, conversation, [image])
    assert answer.stats.visual_tokens == 1 and answer.stats.visual_tokens_full == 80


def test_several_images_and_a_follow_up_equal_the_reference(engine, hf_model, sample_image):
    a, b = load_image(document()), load_image(ImageOps.mirror(sample_image))
    conversation = Conversation()
    first = ask(engine, conversation, "Compare.", [a, b])
    compare(engine, hf_model, first, conversation, [a, b])
    follow = ask(engine, conversation, "And the first one?", [])
    compare(engine, hf_model, follow, conversation, [a, b])
    # The pruned history is reused from the KV state: only the new text is fed.
    assert follow.stats.input_tokens < len(engine.last_sequence) - first.stats.visual_tokens
    third = ask(engine, conversation, "This one?", [load_image(one_repeat())])
    compare(engine, hf_model, third, conversation, [a, b, load_image(one_repeat())])


def test_a_prepared_image_equals_the_reference(engine, hf_model):
    image = load_image(ImageOps.flip(document()))
    conversation = Conversation()
    engine.reset()
    prep = engine.prepare(conversation, [image], GenerationSettings(max_new_tokens=NEW_TOKENS))
    assert prep.status == "ready" and 0 < prep.stats.visual_tokens < prep.stats.visual_tokens_full
    answer = ask(engine, conversation, "What is the total?", [image])
    assert answer.stats.images_cached == 1 and answer.stats.input_tokens < 20
    compare(engine, hf_model, answer, conversation, [image])
