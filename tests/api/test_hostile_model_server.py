"""A model server is untrusted input: a real HTTP server on loopback that streams without end,
sends one endless line, a huge error body, a chunk whose content is a number, bad JSON, an
error event, or goes silent. Each answer ends with a sentence (exit code 1 for `desklens ask`),
the client's --max-new-tokens holds, and nothing is read whole."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cli_runner import desklens

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService
from desktop.core.remote.config import ServerConfig
from desktop.core.remote.engine import CHARS_PER_TOKEN, RemoteEngine, chunk_limit, make_client
from desktop.core.remote.limits import ERROR_BODY_BYTES, LINE_BYTES

MODEL = "hostile-vl"
RAW = "\x1b]0;pwned\x07\x1b[2J\rinvoice\u202efdp.exe"  # a title change, a clear, a CR, a bidi
SHOWN = r"\x1b]0;pwned\x07\x1b[2J\rinvoice\u202efdp.exe"


def chunk(content: object = None, finish: str | None = None) -> bytes:
    delta = {"content": content} if content is not None else {}
    body = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip
    return f"data: {json.dumps(body)}\n\n".encode()


class Hostile(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = mode
        self.sent = 0  # bytes of the answer written before the client left
        self.release = threading.Event()  # ends a silent answer when the test is done

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: Hostile

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        names = [MODEL, f"evil{RAW}"] if self.server.mode == "raw" else [MODEL]
        data = [{"id": name, "object": "model"} for name in names]
        body = json.dumps({"object": "list", "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        mode = self.server.mode
        status = 500 if mode == "huge-error" else 200
        self.send_response(status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for part in self.parts(mode):
                self.wfile.write(part)
                self.wfile.flush()
                self.server.sent += len(part)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client left: what it should do

    def parts(self, mode: str) -> Iterator[bytes]:
        if mode == "endless":  # bounded only so that a failing client cannot hang the test
            for _ in range(1_000_000):
                yield chunk("word ")
        elif mode == "long-line":  # one data: line of 100 MB, never ended
            yield b'data: {"choices": [{"delta": {"content": "'
            for _ in range(100):
                yield b"x" * (1 << 20)
        elif mode == "huge-error":
            yield b'{"error": {"message": "' + b"y" * (1 << 20)
            for _ in range(99):
                yield b"y" * (1 << 20)
            yield b'"}}'
        else:
            yield chunk("Hello ")
            if mode == "number":
                yield chunk(42)
            elif mode == "bad-json":
                yield b"data: {not json\n\n"
            elif mode == "error-event":
                yield b'data: {"error": {"message": "the model crashed"}}\n\n'
            elif mode == "raw":
                yield chunk(f"answer {RAW}")
                yield f"data: {json.dumps({'error': {'message': f'crashed {RAW}'}})}\n\n".encode()
            elif mode == "silent":
                self.server.release.wait(timeout=30)
            yield chunk("world", finish="stop")
            yield b"data: [DONE]\n\n"


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[Hostile]:
    server = Hostile(request.param)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    thread.join(timeout=30)
    server.server_close()


def ask(server: Hostile, tokens: int = 1024, read_timeout_s: float = 60.0, silence_s=120.0):
    config = ServerConfig(server.url, "key", MODEL)
    client = make_client(config, read_timeout_s=read_timeout_s)
    engine = RemoteEngine(config, client, silence_s=silence_s)
    try:
        request = AskRequest("What is this?", (), GenerationSettings(max_new_tokens=tokens))
        return ConversationService(engine).ask(request).answer
    finally:
        engine.close()


@pytest.mark.parametrize("hostile", ["endless"], indirect=True)
@pytest.mark.parametrize("tokens", [1, 50, 300])
def test_an_endless_stream_ends_at_the_clients_max_new_tokens(hostile: Hostile, tokens: int):
    answer = ask(hostile, tokens)
    expected = ("word " * chunk_limit(tokens))[: tokens * CHARS_PER_TOKEN]  # whichever first
    assert answer.text == expected and answer.finish_reason == "length"
    assert answer.cut_off is None and answer.error is None


@pytest.mark.parametrize(
    ("hostile", "words", "said"),
    [
        ("long-line", "", f"it sent a line longer than {LINE_BYTES >> 20} MB"),
        ("number", "Hello ", "it sent a malformed chunk (content is int)"),
        ("bad-json", "Hello ", "sent a chunk that is not JSON"),
        ("error-event", "Hello ", "the model crashed"),
    ],
    indirect=["hostile"],
)
def test_a_malformed_or_flooding_stream_ends_with_a_sentence(hostile: Hostile, words, said):
    answer = ask(hostile)
    reason = answer.error if not words else answer.cut_off
    assert answer.text == words and reason is not None and said in reason, answer
    assert reason.startswith(("The server at 127.0.0.1", "The answer from the server at"))
    assert len(reason) < 300 and "\n" not in reason


@pytest.mark.parametrize("hostile", ["huge-error"], indirect=True)
def test_a_huge_error_body_is_read_only_as_far_as_its_sentence(hostile: Hostile):
    answer = ask(hostile)
    assert answer.error is not None and "(500)" in answer.error and len(answer.error) < 400
    assert hostile.sent < 100 * (1 << 20)  # the client left long before the body's end
    assert ERROR_BODY_BYTES < 1 << 20


@pytest.mark.parametrize("hostile", ["silent"], indirect=True)
def test_a_server_gone_silent_ends_the_answer_with_a_sentence(hostile: Hostile):
    answer = ask(hostile, read_timeout_s=1.0)
    assert answer.text == "Hello " and answer.finish_reason == "stopped"
    assert answer.cut_off is not None and "did not answer in time" in answer.cut_off


@pytest.mark.parametrize("hostile", ["silent"], indirect=True)
def test_a_server_silent_mid_answer_is_cut_off_long_before_the_read_timeout(hostile: Hostile):
    answer = ask(hostile, read_timeout_s=600.0, silence_s=1.0)  # waits on the watchdog only
    assert answer.text == "Hello " and answer.finish_reason == "stopped"
    assert answer.cut_off is not None and "fell silent for 1 s" in answer.cut_off


@pytest.mark.parametrize("hostile", ["endless", "number"], indirect=True)
def test_desklens_ask_holds_its_limits_and_exits_1_with_the_reason(hostile: Hostile, tmp_path):
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path), "DESKLENS_SERVER": ""}
    run = desklens("ask", "-q", "Hi", "--server", hostile.url, "--model", MODEL,
                   "--max-new-tokens", "50", env=env, timeout=60)  # fmt: skip
    assert "Traceback" not in run.stderr
    if hostile.mode == "endless":
        assert run.returncode == 0 and run.stdout.strip() == " ".join(["word"] * chunk_limit(50))
    else:
        assert run.returncode == 1 and run.stdout.strip() == "Hello"
        assert "malformed chunk (content is int)" in run.stderr


@pytest.mark.parametrize("hostile", ["raw"], indirect=True)
def test_nothing_a_server_says_reaches_the_terminal_raw(hostile: Hostile, tmp_path):
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path), "DESKLENS_SERVER": ""}
    models = desklens("models", "--server", hostile.url, env=env, timeout=60)
    asked = desklens("ask", "-q", "Hi", "--server", hostile.url, "--model", MODEL, env=env,
                     timeout=60)  # fmt: skip
    for run in (models, asked):
        for unsafe in ("\x1b", "\x07", "\r", "\u202e"):
            assert unsafe not in run.stdout + run.stderr, (unsafe, run)
    assert f"evil{SHOWN}" in models.stdout
    assert f"Hello answer {SHOWN}" in asked.stdout
    assert r"crashed \x1b]0;pwned\x07\x1b[2J" in asked.stderr and asked.returncode == 1


def run_into_closed_pipe(*args: str, env: dict) -> subprocess.CompletedProcess:
    """`desklens ARGS | head -c 0`: the reader of stdout is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "desktop", *args], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=60)  # fmt: skip
    finally:
        os.close(write_end)


@pytest.mark.parametrize("hostile", ["endless"], indirect=True)
def test_a_closed_stdout_ends_quietly(hostile: Hostile, tmp_path):
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path), "DESKLENS_SERVER": ""}
    asked = run_into_closed_pipe("ask", "-q", "Hi", "--server", hostile.url, "--model", MODEL,
                                 env=env)  # fmt: skip
    listed = run_into_closed_pipe("models", "--server", hostile.url, env=env)
    for run in (asked, listed):
        assert run.returncode == 141, run.stderr
        assert "Traceback" not in run.stderr and "Broken pipe" not in run.stderr, run.stderr
