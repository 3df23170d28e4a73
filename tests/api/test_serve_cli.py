"""`desklens serve --api --port N` as users start it: a real process, stopped by SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest
from api_support import user_message

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_usage_errors_come_before_any_loading(tmp_path) -> None:
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path)}
    for args, words in (
        (["--port", "9000"], "go with --api"),
        (["--api", "--port", "0"], "1 to"),
        (["--api", "--idle-exit", "5"], "--idle-exit"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "desktop", "serve", *args],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
        )  # fmt: skip
        assert result.returncode == 2 and words in result.stderr


def start_serve(tiny_ir: Path, data: Path, port: int) -> tuple[subprocess.Popen, openai.OpenAI]:
    """`desklens serve --api` once it says it is ready, and an OpenAI client for it."""
    env = {**os.environ, "DESKLENS_DATA_DIR": str(data)}
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop", "serve", "--api", "--port", str(port),
         "--model", str(tiny_ir)],
        stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
    )  # fmt: skip
    lines = []
    for line in process.stderr or ():  # blocks until the process says it is ready (or dies)
        lines.append(line)
        if "API ready" in line:
            break
    assert any("API ready" in line for line in lines), "".join(lines)
    token = (data / "api.token").read_text().strip()
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{port}/v1", api_key=token, max_retries=0, timeout=120
    )
    return process, client


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name == "nt", reason="POSIX signals")
@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGHUP])
def test_serve_api_answers_the_openai_client_and_stops_on_a_signal(
    tiny_ir, tmp_path, sample_image, stop_signal
):
    """It answers; then the signal comes while an answer of up to 16,384 tokens streams
    (issue 59: honoured whatever the engine does): the process ends within the owner's
    grace and exits 0, the stream cut, nothing of the OCR socket left."""
    from desktop.cli.api_serve import OWNER_STOP_S

    port = free_port()
    process, client = start_serve(tiny_ir, tmp_path, port)
    chunks, signalled = 0, 0.0
    try:
        answer = client.chat.completions.create(
            model="desklens", messages=[user_message("Hi", sample_image)], max_tokens=4
        )
        assert answer.usage.completion_tokens >= 1
        stream = client.chat.completions.create(
            model="desklens", messages=[user_message("Hi", sample_image)], max_tokens=16_384,
            stream=True,
        )  # fmt: skip
        with pytest.raises(openai.APIError):  # cut mid-answer: never a normal end
            for _chunk in stream:
                chunks += 1
                if chunks == 3:  # words are coming: the engine is busy answering
                    process.send_signal(stop_signal)
                    signalled = time.monotonic()
            raise AssertionError(f"the answer ended normally after {chunks} chunks")
        assert process.wait(timeout=60) == 0
        assert time.monotonic() - signalled < OWNER_STOP_S + 5
        assert "stopped (terminated)" in (process.stderr.read() if process.stderr else "")
        assert not [p.name for p in tmp_path.iterdir() if p.name in ("ocr.sock", "ocr.key")]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
