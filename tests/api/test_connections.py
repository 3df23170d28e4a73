"""No client can take the API away: hundreds of silent or half-sent connections (loopback,
bounded in number and time) while an authenticated client is served; request heads, bodies and
declared sizes within seconds; a non-streaming client that leaves stops its answer."""

from __future__ import annotations

import selectors
import socket
import time
from contextlib import ExitStack

from api_support import hold_after_a_full_answer, http_call, start_api

HALF_SENT = b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthoriz"


def junk(stack: ExitStack, port: int, count: int, payload: bytes = b"") -> list[socket.socket]:
    """`count` connections that send `payload` (maybe nothing) and then nothing more."""
    opened = []
    for _ in range(count):
        sock = stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
        if payload:
            sock.sendall(payload)
        opened.append(sock)
    return opened


def closed_by_server(sockets: list[socket.socket], wanted: int, within_s: float) -> int:
    """How many of `sockets` the server closed (EOF or reset), waiting until `wanted` are or
    `within_s` has passed. A selector, not select(): client and server share this process, so
    the descriptors can pass select()'s limit of 1024."""
    closed: set[socket.socket] = set()
    deadline = time.monotonic() + within_s
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        while len(closed) < wanted and time.monotonic() < deadline:
            for key, _ in selector.select(max(0.0, deadline - time.monotonic())):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    ended = sock.recv(65536) == b""
                except ConnectionResetError:
                    ended = True
                if ended:
                    closed.add(sock)
                    selector.unregister(sock)
    return len(closed)


def test_hundreds_of_silent_and_half_sent_connections_do_not_lock_a_client_out(engine, tmp_path):
    api = start_api(engine, tmp_path, run_jobs=False, head_timeout_s=120)
    try:
        with ExitStack() as stack:
            silent = junk(stack, api.server.port, 300)
            half = junk(stack, api.server.port, 200, HALF_SENT)
            for _ in range(5):  # before, the 257th connection on got 503s for as long
                started = time.monotonic()
                status, _, body = http_call(api, "GET", "/models")
                assert status == 200 and body["data"], body
                assert time.monotonic() - started < 5
            assert closed_by_server(silent + half, 1, 0.2) == 0  # all under the cap: kept
    finally:
        api.stop()


def test_past_the_cap_the_oldest_idle_connections_make_room(engine, tmp_path):
    api = start_api(engine, tmp_path, run_jobs=False, head_timeout_s=120, max_connections=50)
    try:
        with ExitStack() as stack:
            first = junk(stack, api.server.port, 100) + junk(stack, api.server.port, 100, HALF_SENT)
            for _ in range(5):
                assert http_call(api, "GET", "/models")[0] == 200
            # 200 junk past a cap of 50: 150 or more were dropped, the oldest first
            assert closed_by_server(first, 150, 20) >= 150
            assert closed_by_server(first[:150], 150, 5) == 150
    finally:
        api.stop()


def test_silent_slow_and_half_sent_heads_are_closed_within_the_head_timeout(engine, tmp_path):
    api = start_api(engine, tmp_path, run_jobs=False, head_timeout_s=0.5)
    try:
        with ExitStack() as stack:
            started = time.monotonic()
            silent = junk(stack, api.server.port, 20)
            half = junk(stack, api.server.port, 20, HALF_SENT)
            drip = junk(stack, api.server.port, 1, b"G")[0]
            for byte in b"ET /v1/models HTTP/1.1\r\n":  # a byte at a time, never finishing
                if closed_by_server([drip], 1, 0.05):
                    break
                drip.send(bytes([byte]))
            assert closed_by_server([*silent, *half, drip], 41, 10) == 41
            assert time.monotonic() - started < 5
            assert http_call(api, "GET", "/models")[0] == 200
    finally:
        api.stop()


def _send_head(api, extra: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", api.server.port), timeout=10)
    sock.sendall(
        (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {api.token}\r\nContent-Type: application/json\r\n{extra}\r\n"
        ).encode()
    )
    return sock


def _reply(sock: socket.socket) -> bytes:
    """One whole response (head and Content-Length body), without waiting for the close."""
    data = b""
    while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < _length(data):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _length(data: bytes) -> int:
    for line in data.partition(b"\r\n\r\n")[0].split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def test_a_declared_size_over_the_limit_is_a_413_at_once(engine, tmp_path):
    api = start_api(engine, tmp_path, run_jobs=False, body_timeout_s=30, read_timeout_s=30)
    try:
        for size in (16 << 20 | 1, 1 << 40, 10**18):
            started = time.monotonic()
            with _send_head(api, f"Content-Length: {size}\r\n") as sock:
                reply = _reply(sock)
            assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
            assert reply.endswith(b"}") and b"body_too_large" in reply
            assert time.monotonic() - started < 5  # not after the 30 s body timeout
        assert http_call(api, "GET", "/models")[0] == 200
    finally:
        api.stop()


def test_a_body_that_stops_arriving_is_a_408_within_the_read_timeout(engine, tmp_path):
    api = start_api(engine, tmp_path, run_jobs=False, body_timeout_s=30, read_timeout_s=0.5)
    try:
        heads = [
            "Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n{",  # a chunk that never ends
            "Content-Length: 1000\r\n\r\n{",
        ]
        for extra in heads:
            started = time.monotonic()
            with _send_head(api, extra) as sock:
                reply = _reply(sock)
            assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
            assert time.monotonic() - started < 5
    finally:
        api.stop()


def test_a_client_leaving_a_non_streaming_answer_stops_it(engine, tmp_path, sample_image):
    api = start_api(engine, tmp_path)
    try:
        held, _, full_tokens = hold_after_a_full_answer(api, sample_image)
        body = (
            '{"model": "desklens", "max_tokens": 2000, "messages": [{"role": "user", '
            '"content": "Go on."}]}'
        )
        with _send_head(api, f"Content-Length: {len(body)}\r\n") as sock:
            sock.sendall(body.encode())
            assert held.started.wait(120)  # the first words: leave (the socket closes)
        assert held.stopped_by_the_leave(full_tokens)
        assert http_call(api, "GET", "/models")[0] == 200
    finally:
        api.stop()
