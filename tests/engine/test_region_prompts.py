"""A region question as the model reads it (issue 40): the prompt's ids carry the box in
Qwen3-VL's `{"bbox_2d": [...]}` convention and the crop's visual tokens, as many as transformers'
own Qwen2-VL image processor gives the crop; and at the default budget the region of a 4K page
is read with at least 4x the tokens per pixel of the whole page."""

from __future__ import annotations

import pytest

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.config import DEFAULT_MAX_VISUAL_TOKENS
from desktop.core.engine.prompt import PromptBuilder
from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.regions import Region


@pytest.fixture(scope="module")
def engine(tiny_ir):
    return VLMEngine.load(tiny_ir, EngineConfig())  # the default image budget


def processor_tokens(checkpoint, size: tuple[int, int], spec) -> int:
    """Visual tokens transformers' processor gives an image of `size` under the same budget."""
    import numpy as np
    from transformers import Qwen2VLImageProcessor

    budget = {"min_pixels": spec.min_pixels, "max_pixels": spec.max_pixels}
    processor = Qwen2VLImageProcessor.from_pretrained(
        checkpoint,
        size={"shortest_edge": spec.min_pixels, "longest_edge": spec.max_pixels},
        **budget,  # the checkpoint's config names the budget both ways
    )
    pixels = np.zeros((size[1], size[0], 3), np.uint8)
    grid = processor(images=[pixels], return_tensors="np")["image_grid_thw"][0]
    return int(np.prod(grid)) // (spec.merge_size**2)


def test_a_region_prompt_carries_the_box_and_the_crop_at_its_own_resolution(
    engine, tiny_checkpoint, monkeypatch
):
    lines = [f"Row {n}: amount {n * 1117}.25 due" for n in range(40)]
    page = load_image(render_lines(lines, size=22, width=3840, height=2160), name="4k.png")
    region = Region(2400, 1200, 960, 540)
    built = []
    original = PromptBuilder.sequence

    def sequence(self, *args, **kwargs):
        built.append(original(self, *args, **kwargs))
        return built[-1]

    monkeypatch.setattr(PromptBuilder, "sequence", sequence)
    settings = GenerationSettings(max_new_tokens=2, skip_repeats=False)  # every token counted
    request = AskRequest("What is due?", (page,), settings, regions=(region,))
    result = ConversationService(engine).ask(request)
    assert result.answer.ok, result.answer.error

    prompt = built[-1]
    text = engine.codec.decode(prompt.ids)
    assert '{"bbox_2d": [625, 556, 875, 806]}' in text and text.count("bbox_2d") == 1
    assert text.index("bbox_2d") < text.index("What is due?")
    (whole_start, whole), (crop_start, crop) = prompt.images
    pad = engine.codec.special.image_pad
    crop_ids = prompt.ids[crop_start : crop_start + crop.tokens + 1]
    assert crop_ids[:-1] == [pad] * crop.tokens and crop_ids[-1] != pad  # the block, whole
    spec = engine.encoder.spec
    assert spec.max_pixels == DEFAULT_MAX_VISUAL_TOKENS * spec.factor**2
    assert crop.tokens == processor_tokens(tiny_checkpoint, (960, 540), spec) == 30 * 17
    assert whole.tokens == processor_tokens(tiny_checkpoint, (3840, 2160), spec)
    whole_density = whole.tokens / (3840 * 2160)
    crop_density = crop.tokens / (960 * 540)
    assert crop_density >= 4 * whole_density, crop_density / whole_density
