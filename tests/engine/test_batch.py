"""Several questions answered side by side give the same answers as one at a time."""

from __future__ import annotations

import numpy as np
import pytest

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.batch import BatchPrompt, pad_left
from desktop.core.images import load_image


@pytest.fixture(scope="module")
def exact_engine(tiny_ir_fp32):
    return VLMEngine.load(tiny_ir_fp32, EngineConfig(inference_precision="f32"))


def _images(sample_image):
    from PIL import ImageOps

    wide = sample_image.resize((400, 160))
    return [load_image(sample_image), load_image(ImageOps.mirror(wide)), load_image(wide)]


def test_pad_left_right_aligns_rows_and_masks_padding():
    a = BatchPrompt(np.ones((2, 4), np.float32), np.array([[5, 6]] * 3), np.zeros(2, bool), None)
    b = BatchPrompt(
        np.full((4, 4), 2, np.float32),
        np.tile(np.arange(4), (3, 1)),
        np.array([False, True, True, False]),
        np.ones((2, 2, 4), np.float32),
    )
    batch = pad_left([a, b])
    assert batch.embeds.shape == (2, 4, 4)
    assert batch.attention_mask.tolist() == [[0, 0, 1, 1], [1, 1, 1, 1]]
    assert (batch.embeds[0, :2] == 0).all() and (batch.embeds[0, 2:] == 1).all()
    assert batch.positions[:, 0, 2:].tolist() == [[5, 6]] * 3
    assert batch.visual_mask.tolist() == [[False] * 4, [False, True, True, False]]
    assert batch.deepstack.shape == (2, 2, 4)


def test_batched_answers_equal_one_at_a_time(exact_engine, sample_image):
    images = _images(sample_image)
    requests = [
        ("Extract the text.", [images[0]]),
        ("What is shown here, in a few words?", [images[1]]),
        ("Describe.", [images[2], images[0]]),
        ("Say hello.", []),
    ]
    settings = GenerationSettings(max_new_tokens=10, ignore_eos=True)
    one_by_one = []
    for question, imgs in requests:
        exact_engine.reset()
        one_by_one.append(exact_engine.ask(Conversation(), question, imgs, settings).text)
    together = exact_engine.ask_each(requests, settings)
    assert all(answer.ok for answer in together)
    assert [answer.text for answer in together] == one_by_one
    assert [a.stats.generated_tokens for a in together] == [10] * 4
    assert exact_engine.language.kv_length == 0  # the batch left no state behind


def test_rows_that_finish_early_stop_growing(exact_engine, sample_image):
    images = _images(sample_image)
    requests = [("Extract the text.", [images[0]]), ("Describe.", [images[1]])]
    short, long = GenerationSettings(max_new_tokens=3), GenerationSettings(max_new_tokens=12)
    lengths = [a.stats.generated_tokens for a in exact_engine.ask_each(requests, short)]
    assert all(n <= 3 for n in lengths)
    answers = exact_engine.ask_each(requests, long)
    assert all(a.finish_reason in ("eos", "length") for a in answers)
    # A row that met its end-of-turn early is not continued by the others' steps.
    for answer in answers:
        if answer.finish_reason == "eos":
            assert answer.stats.generated_tokens < 12


def test_stop_ends_every_row_and_errors_are_per_answer(exact_engine, sample_image):
    images = _images(sample_image)
    requests = [("Describe.", [images[0]]), ("Describe.", [images[1]])]
    exact_engine.stop()  # a stop before the call is cleared by it
    answers = exact_engine.ask_each(requests, GenerationSettings(max_new_tokens=4))
    assert all(a.ok for a in answers)
    schema = GenerationSettings(json_schema={"type": "object"})
    refused = exact_engine.ask_each(requests, schema)
    assert all(a.error and "one at a time" in a.error for a in refused)
