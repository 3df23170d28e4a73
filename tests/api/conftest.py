"""The local API's tests: the real server on a free loopback port, the official `openai`
client, the real OpenVINO runtime with the tiny converted model and the real fast OCR."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from tiny_models import EXACT

from desktop.core.api.jobs import EngineThread, JobQueue
from desktop.core.api.routes import ApiBackend
from desktop.core.api.security import load_or_create_token
from desktop.core.api.server import ApiServer, ApiSettings

# The tests compare answers token for token (streamed vs not, KV reused vs fed anew): f32
# arithmetic makes them exact, as in the engine tests.
MAX_WAITING = 8


@dataclass
class RunningApi:
    server: ApiServer
    token: str
    owner: EngineThread | None

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, **kwargs):
        import openai

        return openai.OpenAI(base_url=self.url, api_key=self.token, max_retries=0, **kwargs)

    def stop(self) -> None:
        self.server.stop()
        if self.owner is not None:
            self.owner.stop()


@pytest.fixture(scope="session")
def api_data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("api-data")


@pytest.fixture(scope="session")
def engine(tiny_ir):
    from desktop.core.engine import EngineConfig, VLMEngine

    return VLMEngine.load(tiny_ir, EngineConfig(**EXACT))


@cache
def _ocr_engine():
    from desktop.core.ocr import OcrEngine

    return OcrEngine()


@pytest.fixture(scope="session")
def ocr_engine():
    return _ocr_engine()


def start_api(engine, data_dir: Path, run_jobs: bool = True, **settings) -> RunningApi:
    """A server on a free port; with `run_jobs` False nothing takes the chat jobs (they wait)."""
    queue = JobQueue(settings.pop("max_waiting", MAX_WAITING))
    owner = EngineThread(engine, queue) if run_jobs else None
    name = engine.info.name
    backend = ApiBackend(queue, lambda: name, _ocr_engine)
    token = load_or_create_token(data_dir / "api.token")
    server = ApiServer(backend, token, ApiSettings(port=0, **settings))
    server.start()
    if owner is not None:
        owner.start()
    return RunningApi(server, token, owner)


@pytest.fixture(scope="module")
def api(engine, api_data_dir):
    running = start_api(engine, api_data_dir)
    yield running
    running.stop()


@pytest.fixture
def client(api):
    return api.client()
