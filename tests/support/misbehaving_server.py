"""A stand-in model server that misbehaves on purpose, one way per `mode`, for the remote
engine's failure sentences: a refused key, an unknown model, busy with Retry-After, a stream
cut midway, TLS with a certificate nobody trusts. Stdlib only; runs on a free loopback port."""

from __future__ import annotations

import json
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MODEL = "stand-in-vl"


def _chunk(content: str | None = None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content is not None else {}
    body = {
        "id": "x", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }  # fmt: skip
    return f"data: {json.dumps(body)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    server: StandInServer

    def log_message(self, *args: object) -> None:  # quiet tests
        pass

    def _headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}

    def _json(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, headers: dict | None = None) -> None:
        self._json(status, {"error": {"message": message, "type": "error"}}, headers)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.server.requests.append(("GET", self.path, self._headers()))
        if self.server.mode == "401":
            self._error(401, "Invalid API key.")
        elif self.server.mode == "no-list":
            self._error(404, "Not found.")
        else:
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append(("POST", self.path, self._headers(), body))
        mode = self.server.mode
        if mode == "401":
            self._error(401, "Invalid API key.")
        elif mode == "404":
            self._error(404, f"Model {body.get('model')!r} not found.")
        elif mode == "429":
            self._error(429, "Too many requests.", {"Retry-After": "7"})
        elif mode == "503":
            self._error(503, "Loading the model.", {"Retry-After": "30"})
        elif mode == "cut":
            self._cut_stream()
        else:
            self._error(500, f"unknown mode {mode}")

    def _cut_stream(self) -> None:
        """Two words, then the connection closes: no finish, no [DONE]."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(_chunk("Hello") + _chunk(" wor"))
        self.wfile.flush()
        self.close_connection = True


class StandInServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.mode = mode
        self.requests: list[tuple] = []

    @property
    def url(self) -> str:
        scheme = "https" if isinstance(self.socket, ssl.SSLSocket) else "http"
        return f"{scheme}://127.0.0.1:{self.server_address[1]}/v1"

    def use_tls(self, folder: Path) -> None:
        """Serves https with a fresh self-signed certificate (not trusted by anyone)."""
        key, cert = folder / "key.pem", folder / "cert.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )  # fmt: skip
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.socket = context.wrap_socket(self.socket, server_side=True)

    def __enter__(self) -> StandInServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
