"""Stopping the API (SIGTERM to `desklens serve --api`) while an OCR request is being read
answers that client at once with a JSON 503, not a plain-text 500 after the grace period."""

from __future__ import annotations

import threading

from api_support import http_call, png
from PIL import Image

from desktop.core.api.jobs import JobQueue
from desktop.core.api.routes import ApiBackend
from desktop.core.api.server import ApiServer, ApiSettings
from desktop.core.api.tokens import load_or_create_token


class HeldOcr:
    """An OCR engine whose read takes until the test lets it go (a 100 MP page, say)."""

    def __init__(self) -> None:
        self.reading = threading.Event()
        self.release = threading.Event()

    def extract(self, image: object) -> object:
        self.reading.set()
        self.release.wait(timeout=60)
        raise RuntimeError("read after the server stopped")


class Api:
    def __init__(self, server: ApiServer, token: str) -> None:
        self.server, self.token = server, token


def test_a_request_under_way_gets_a_json_503_when_the_server_stops(tmp_path) -> None:
    ocr = HeldOcr()
    backend = ApiBackend(JobQueue(8), lambda: None, lambda: ocr)  # type: ignore[arg-type, return-value]
    token = load_or_create_token(tmp_path / "api.token")
    server = ApiServer(backend, token, ApiSettings(port=0))
    server.start()
    replies: list[tuple] = []
    image = png(Image.new("RGB", (64, 32), "white"))
    call = threading.Thread(
        target=lambda: replies.append(
            http_call(Api(server, token), "POST", "/ocr", image, {"Content-Type": "image/png"})
        )
    )
    call.start()
    try:
        assert ocr.reading.wait(timeout=60)
        server.stop()  # what SIGTERM does
        call.join(timeout=30)
        assert not call.is_alive()
    finally:
        ocr.release.set()
        server.stop()
    [(status, headers, body)] = replies
    assert status == 503 and headers["content-type"].startswith("application/json")
    assert body["error"]["code"] == "server_stopping"
    assert body["error"]["message"] == "DeskLens is stopping its API."
