"""The local API's tests: the real server on a free loopback port, the official `openai`
client, the real OpenVINO runtime with the tiny converted model and the real fast OCR."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_support import ocr_engine_once, start_api

from devkit.tiny_models import EXACT


@pytest.fixture(scope="session")
def api_data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("api-data")


@pytest.fixture(scope="session")
def engine(tiny_ir):
    """f32: the tests compare answers token for token (streamed vs not, KV reused vs fed
    anew), as the engine tests do."""
    from desktop.core.engine import EngineConfig, VLMEngine

    return VLMEngine.load(tiny_ir, EngineConfig(**EXACT))


@pytest.fixture(scope="session")
def ocr_engine():
    return ocr_engine_once()


@pytest.fixture(scope="module")
def api(engine, api_data_dir):
    running = start_api(engine, api_data_dir)
    yield running
    running.stop()


@pytest.fixture
def client(api):
    return api.client()
