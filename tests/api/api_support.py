"""Helpers of the API tests: a server on a free port, images as data: URLs, messages, raw
HTTP (stdlib only). A module of its own: `conftest` names another folder's file when several
test folders are collected together."""

from __future__ import annotations

import base64
import http.client
import io
import json
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from desktop.core.api.jobs import EngineThread, JobQueue
from desktop.core.api.routes import ApiBackend
from desktop.core.api.server import ApiServer, ApiSettings
from desktop.core.api.tokens import load_or_create_token

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


@cache
def ocr_engine_once():
    from desktop.core.ocr import OcrEngine

    return OcrEngine()


def start_api(engine, data_dir: Path, run_jobs: bool = True, **settings) -> RunningApi:
    """A server on a free port; with `run_jobs` False nothing takes the chat jobs (they wait)."""
    queue = JobQueue(settings.pop("max_waiting", MAX_WAITING))
    owner = EngineThread(engine, queue) if run_jobs else None
    name = engine.info.name
    backend = ApiBackend(queue, lambda: name, ocr_engine_once)
    token = load_or_create_token(data_dir / "api.token")
    server = ApiServer(backend, token, ApiSettings(port=0, **settings))
    server.start()
    if owner is not None:
        owner.start()
    return RunningApi(server, token, owner)


def data_url(image, kind: str = "PNG") -> str:
    buffer = io.BytesIO()
    image.save(buffer, kind)
    mime = "image/png" if kind == "PNG" else "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode()}"


def user_message(text: str, image=None) -> dict:
    parts: list[dict] = [{"type": "text", "text": text}]
    if image is not None:
        parts.insert(0, {"type": "image_url", "image_url": {"url": data_url(image)}})
    return {"role": "user", "content": parts}


def raw_request(port: int, data: bytes, host: str = "127.0.0.1", half_close=True) -> bytes:
    """Sends bytes as they are (what the HTTP clients would not send) and reads the reply
    until the server closes the connection."""
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def http_call(api, method: str, path: str, body: bytes | dict | None = None, headers=None):
    """(status, headers, parsed JSON or text) of one request to the API's /v1 `path`."""
    headers = {"Authorization": f"Bearer {api.token}", **(headers or {})}
    if isinstance(body, dict):
        body = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    connection = http.client.HTTPConnection("127.0.0.1", api.server.port, timeout=120)
    try:
        connection.request(method, f"/v1{path}", body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    try:
        parsed = json.loads(data)
    except ValueError:
        parsed = data.decode(errors="replace")
    return response.status, {k.lower(): v for k, v in response.getheaders()}, parsed


def serve_until_stdin_closes(model_dir: str, data_dir: str) -> None:
    """A server in a process of its own (memory tests read its RSS): prints its port and
    token as JSON, serves until stdin closes."""
    import sys

    from desktop.core.engine import VLMEngine

    api = start_api(VLMEngine.load(Path(model_dir)), Path(data_dir))
    print(json.dumps({"port": api.server.port, "token": api.token}), flush=True)
    sys.stdin.read()
    api.stop()


class HeldAnswers:
    """Wraps the server's ChatRunner: after its first words, an answer waits (60 s at most)
    until its request's cancel is set, so a test can leave mid-answer without timing."""

    def __init__(self, api: RunningApi) -> None:
        import threading

        self.started, self.finished = threading.Event(), threading.Event()
        self.results: list = []
        self.saw_leave: list[bool] = []
        runner = api.server.routes.runner
        self._original = runner.run
        runner.run = self.run

    def run(self, service, call, emit, cancel):
        def emit_then_hold(text: str) -> None:
            emit(text)
            self.started.set()
            self.saw_leave.append(cancel.wait(60))

        try:
            self.results.append(self._original(service, call, emit_then_hold, cancel))
        finally:
            self.finished.set()
        return self.results[-1]

    def stopped_by_the_leave(self, full_tokens: int) -> bool:
        """The answer ended, its cancel was set by the client leaving (the first hold saw it:
        no hold ran out), after <= 3 tokens."""
        assert self.finished.wait(120)
        tokens = self.results[0].usage.completion_tokens
        return bool(self.saw_leave) and all(self.saw_leave) and tokens <= 3 < full_tokens


def hold_after_a_full_answer(api: RunningApi, image) -> tuple[HeldAnswers, list[dict], int]:
    """A whole answer first (its length), then answers held: (held, messages, full tokens)."""
    messages = [user_message("Go on.", image)]
    full = api.client().chat.completions.create(
        model="desklens", messages=messages, max_tokens=2000
    )
    assert full.usage.completion_tokens > 8
    return HeldAnswers(api), messages, full.usage.completion_tokens
