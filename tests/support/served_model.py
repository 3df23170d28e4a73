"""A model server for the tests that use one (the app's "A server" model source): DeskLens's own
`serve --api` stack (the real HTTP server on a free loopback port, one engine thread), serving
a model loaded in this process. tests/api has its own fuller helpers (api_support.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from desktop.core.api.jobs import EngineThread, JobQueue
from desktop.core.api.routes import ApiBackend
from desktop.core.api.server import ApiServer, ApiSettings
from desktop.core.api.tokens import load_or_create_token


@dataclass
class ServedModel:
    server: ApiServer
    owner: EngineThread
    key: str  # what clients send as their bearer token

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    def stop(self) -> None:
        self.server.stop()
        self.owner.stop()


def serve_model(engine, data_dir: Path) -> ServedModel:
    """`engine` (a loaded VLMEngine) behind the API on 127.0.0.1; its key in `data_dir`."""
    from desktop.core.ocr import OcrEngine

    queue = JobQueue(8)
    owner = EngineThread(engine, queue)
    name = engine.info.name
    ocr: list[OcrEngine] = []

    def ocr_engine() -> OcrEngine:  # only built if a test asks the server for OCR
        if not ocr:
            ocr.append(OcrEngine())
        return ocr[0]

    backend = ApiBackend(queue, lambda: name, ocr_engine)
    key = load_or_create_token(data_dir / "api.token")
    server = ApiServer(backend, key, ApiSettings(port=0))
    server.start()
    owner.start()
    return ServedModel(server, owner, key)
