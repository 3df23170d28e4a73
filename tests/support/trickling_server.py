"""A model server that holds its client without saying anything useful, one way per `mode`
(issue 59): keep-alive comments or empty deltas without end, headers a byte at a time, a gzip
body that inflates far past the caps, numeric model ids, an absurd `usage`. Stdlib only, on a
free loopback port; `stop()` (or leaving the `with`) ends every answer it holds."""

from __future__ import annotations

import gzip
import io
import json
import threading
from collections.abc import Iterator
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "trickle-vl"


def chunk(content: str | None = None, finish: str | None = None, usage: dict | None = None):
    delta = {"content": content} if content is not None else {}
    body: dict = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
                  "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n".encode()


class Trickling(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str, every_s: float = 0.2) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode, self.every_s = mode, every_s
        self.stopping = threading.Event()
        self.bodies: list[dict] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> Trickling:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Trickling

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        numeric = self.server.mode in ("numeric-ids", "huge-usage")
        ids: list[object] = [5, MODEL] if numeric else [MODEL]
        big = {"X-Big": "y" * (1 << 20)} if self.server.mode == "big-header" else {}
        self._send(json.dumps({"object": "list", "data": [{"id": i} for i in ids]}).encode(), big)

    def do_POST(self) -> None:  # noqa: N802
        self.server.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        try:
            if self.server.mode == "slow-headers":
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 10_000:
                    if self.server.stopping.wait(self.server.every_s):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            elif self.server.mode == "gzip-line":  # 400 MB of one line, ~2 MB on the wire
                self._send(_gzip_line(), {"Content-Encoding": "gzip"}, "text/event-stream")
            elif self.server.mode == "gzip-answer":  # a well-behaved answer, compressed
                parts = chunk("Hello ") + chunk("world", finish="stop") + b"data: [DONE]\n\n"
                self._send(gzip.compress(parts), {"Content-Encoding": "gzip"}, "text/event-stream")
            else:
                self._stream()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client left: what it should do

    def _send(self, body: bytes, headers: dict | None = None, kind="application/json") -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for part in self._parts():
            self.wfile.write(part)
            self.wfile.flush()

    def _parts(self) -> Iterator[bytes]:
        mode, wait = self.server.mode, self.server.stopping.wait
        if mode == "huge-usage":
            usage = {"prompt_tokens": 1, "completion_tokens": 1e308, "total_tokens": 1e308}
            yield chunk("Hello") + chunk(finish="stop") + chunk(usage=usage)
            yield b"data: [DONE]\n\n"
            return
        if mode == "word-then-empty":
            yield chunk("Hello")
        words = {"keep-alive": b":\n", "steady": chunk("word ")}
        while not wait(self.server.every_s):  # until the client leaves or the test ends
            yield words.get(mode, chunk(""))


@cache
def _gzip_line() -> bytes:
    inflates_to = io.BytesIO()
    with gzip.GzipFile(fileobj=inflates_to, mode="wb", compresslevel=1) as compressor:
        compressor.write(b'data: {"choices": [{"delta": {"content": "')
        block = b"x" * (1 << 20)
        for _ in range(400):
            compressor.write(block)
    return inflates_to.getvalue()
