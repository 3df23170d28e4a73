"""The engine layer's tests run the real OpenVINO runtime on the tiny converted model."""

from __future__ import annotations

import pytest

from desktop.core.images import LoadedImage, load_image


@pytest.fixture
def image(sample_image) -> LoadedImage:
    return load_image(sample_image)
