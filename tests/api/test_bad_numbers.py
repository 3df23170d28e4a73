"""Numbers a client may send: a seed the sampler cannot take is a 400 with a sentence, and an
extreme repetition penalty samples without a warning or a NaN."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from api_support import http_call

from desktop.core.api.errors import ApiError
from desktop.core.api.messages import generation_settings
from desktop.core.chat import GenerationSettings
from desktop.core.engine.sampling import Sampler


@pytest.mark.parametrize("seed", [-1, -(2**63), 2**63, 2**64, 1.5, "7", True])
def test_a_seed_out_of_range_is_a_400_sentence(seed: object) -> None:
    with pytest.raises(ApiError) as caught:
        generation_settings({"seed": seed})
    assert caught.value.status == 400
    assert "'seed' must be an integer from 0 to" in str(caught.value)


@pytest.mark.parametrize("seed", [0, 7, 2**63 - 1])
def test_a_seed_in_range_samples(seed: int) -> None:
    settings = generation_settings({"seed": seed, "temperature": 1.0})
    assert Sampler(settings).choose(np.zeros(8, np.float32), []) in range(8)


def test_a_seed_via_http_is_a_json_400(api) -> None:
    body = {"model": "desklens", "seed": -1, "messages": [{"role": "user", "content": "Hi"}]}
    status, _headers, answer = http_call(api, "POST", "/chat/completions", body)
    assert status == 400 and answer["error"]["param"] == "seed"


@pytest.mark.parametrize("penalty", [1e-300, 5e-324, 1e-30, 10.0])
@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_an_extreme_repetition_penalty_samples_without_warnings(penalty, temperature) -> None:
    settings = GenerationSettings(repetition_penalty=penalty, temperature=temperature, seed=3)
    logits = np.array([3.0, -2.0, 0.5, 1e30, -1e30], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning fails the test
        for _ in range(5):
            assert Sampler(settings).choose(logits, [0, 1, 3, 4]) in range(5)
