"""DeskLens's engine equals transformers token for token on the full-precision tiny model."""

from __future__ import annotations

import numpy as np
import pytest

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.vision import _linspace_f32, prepare_image
from desktop.core.images import load_image
from devkit.tiny_models import EXACT

pytestmark = pytest.mark.slow

NEW_TOKENS = 16
LOGITS_ATOL = 1e-4  # fp32 vs fp32 with different kernels: rounding only (seen: ~5e-6)


@pytest.fixture(scope="module")
def engine(tiny_ir_fp32):
    return VLMEngine.load(tiny_ir_fp32, EngineConfig(**EXACT, skip_repeats=False))


def hf_generate(model, ids, prepared_images, new_tokens=NEW_TOKENS):
    """transformers' own greedy generate on exactly the ids DeskLens fed."""
    import torch

    kwargs = {}
    if prepared_images:
        kwargs["pixel_values"] = torch.from_numpy(
            np.concatenate([p.pixel_patches for p in prepared_images])
        )
        kwargs["image_grid_thw"] = torch.tensor([list(p.grid) for p in prepared_images])
    input_ids = torch.tensor([ids])
    with torch.no_grad():
        logits = (
            model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs)
            .logits[0, -1]
            .numpy()
        )
        out = model.generate(
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=new_tokens,
            do_sample=False,
            **kwargs,
        )
    return out[0, len(ids) :].tolist(), logits


def engine_ids(answer, turn, eos: int):
    """What the engine generated, in transformers' terms (eos included when it ended on it)."""
    return turn.answer_ids + ([eos] if answer.finish_reason == "eos" else [])


def test_linspace_matches_torch_bit_for_bit():
    import torch

    for end, steps in [(47, 30), (7, 5), (47, 143), (47, 1), (15, 64), (47, 47)]:
        ours = _linspace_f32(end, steps)
        theirs = torch.linspace(0, end, steps).numpy()
        assert np.array_equal(ours, theirs), (end, steps)


def test_image_preprocessing_matches_the_hf_image_processor(engine, tiny_checkpoint, sample_image):
    from transformers import Qwen2VLImageProcessor

    processor = Qwen2VLImageProcessor.from_pretrained(tiny_checkpoint)
    theirs = processor(images=[sample_image], return_tensors="np")
    ours = prepare_image(sample_image, engine.encoder.spec)
    assert list(theirs["image_grid_thw"][0]) == list(ours.grid)
    np.testing.assert_allclose(ours.pixel_patches, theirs["pixel_values"], atol=1e-5)


def test_first_turn_and_follow_up_equal_transformers(engine, hf_model, sample_image):
    image = load_image(sample_image)
    eos = engine.codec.special.im_end
    conversation = Conversation()
    settings = GenerationSettings(max_new_tokens=NEW_TOKENS)
    prepared = [prepare_image(image.image, engine.encoder.spec)]

    first = engine.ask(conversation, "What is the total?", [image], settings)
    assert first.ok, first.error
    first_ids = engine.last_sequence.ids
    expected, hf_logits = hf_generate(hf_model, first_ids, prepared)
    assert engine_ids(first, conversation.turns[0], eos) == expected[: len(expected)]
    np.testing.assert_allclose(engine.last_prefill_logits, hf_logits, atol=LOGITS_ATOL)
    assert first.stats.generated_tokens >= 3, "the test needs a real answer to compare"

    second = engine.ask(conversation, "And the date?", [], settings)
    assert second.ok, second.error
    follow_ids = engine.last_sequence.ids
    # transformers gets the whole history: first prompt, the answer's own ids, the new turn.
    assert follow_ids[: len(first_ids)] == first_ids
    assert follow_ids[len(first_ids) : len(first_ids) + len(conversation.turns[0].answer_ids)] == (
        conversation.turns[0].answer_ids
    )
    expected, hf_logits = hf_generate(hf_model, follow_ids, prepared)
    assert engine_ids(second, conversation.turns[1], eos) == expected
    np.testing.assert_allclose(engine.last_prefill_logits, hf_logits, atol=LOGITS_ATOL)


def test_two_images_and_a_mid_conversation_image_equal_transformers(engine, hf_model, sample_image):
    from PIL import ImageOps

    a = load_image(sample_image)
    b = load_image(ImageOps.mirror(sample_image).resize((200, 260)))
    engine.reset()
    conversation = Conversation()
    settings = GenerationSettings(max_new_tokens=8)
    engine.ask(conversation, "Compare.", [a], settings)
    answer = engine.ask(conversation, "And this one?", [b, a], settings)
    assert answer.ok and answer.stats.images_cached == 1 and answer.stats.images_encoded == 1
    spec = engine.encoder.spec
    prepared = [prepare_image(x.image, spec) for x in (a, b, a)]
    expected, hf_logits = hf_generate(hf_model, engine.last_sequence.ids, prepared, 8)
    eos = engine.codec.special.im_end
    assert engine_ids(answer, conversation.turns[1], eos) == expected
    np.testing.assert_allclose(engine.last_prefill_logits, hf_logits, atol=LOGITS_ATOL)
