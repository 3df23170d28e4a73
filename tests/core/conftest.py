"""The core's tests (Qt-free): model setup and conversion use the tiny model; the history
and image tests need no converted model (an empty history store is the common fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.core.history import HistoryStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    with HistoryStore(tmp_path / "history") as opened:
        yield opened


@pytest.fixture(scope="module")
def engine(tiny_ir_fp32):
    """The tiny model on the real runtime in f32 throughout (exact against transformers), one
    per test module."""
    from desktop.core.engine import EngineConfig, VLMEngine
    from devkit.tiny_models import EXACT

    return VLMEngine.load(tiny_ir_fp32, EngineConfig(**EXACT))


@pytest.fixture
def image(sample_image):
    """The tests' sample picture, decoded."""
    from desktop.core.images import load_image

    return load_image(sample_image)
