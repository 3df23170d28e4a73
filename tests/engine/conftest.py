"""The engine layer's tests run the real OpenVINO runtime on the tiny converted model."""

from __future__ import annotations

import pytest

from desktop.core.images import LoadedImage, load_image


@pytest.fixture
def image(sample_image) -> LoadedImage:
    return load_image(sample_image)


@pytest.fixture(scope="module")
def hf_model(tiny_checkpoint):
    """transformers' own Qwen3-VL on the tiny checkpoint, fp32: the exactness tests' reference."""
    import torch
    from transformers import Qwen3VLForConditionalGeneration

    torch.manual_seed(0)
    return Qwen3VLForConditionalGeneration.from_pretrained(
        tiny_checkpoint, torch_dtype=torch.float32
    ).eval()
