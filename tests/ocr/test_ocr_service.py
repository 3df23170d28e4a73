"""The warm OCR service: `desklens serve` answers `desklens ocr FILE` from another process.

The protocol is tested with a plain handler (no models); the end-to-end tests run the real
commands, each user data folder in tmp_path so a service on the developer's machine is
never reached.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from child_log import ChildLog
from PIL import Image, ImageDraw, ImageFont

from desktop.core.ocr import service
from desktop.core.ocr.service import (
    OcrReply,
    OcrRequest,
    OcrService,
    ServiceError,
    ask_service,
    default_endpoint,
    hand_to_open_app,
    ping,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(folder))
    return folder


def echo(request: OcrRequest, stopping: threading.Event) -> OcrReply:
    return OcrReply("ok", output=f"{request.format}:{request.path}")


@contextmanager
def serving(handler=echo, **options) -> Iterator[OcrService]:
    answering = OcrService(handler, **options)
    answering.start()
    try:
        yield answering
    finally:
        answering.stop()


@pytest.fixture
def running(data_dir: Path):
    served: list[OcrRequest] = []
    with serving(on_request=lambda request, reply: served.append(request)) as answering:
        yield answering, served


# --- protocol ---------------------------------------------------------------------------------


def test_a_request_is_answered_by_the_service(running) -> None:
    _, served = running
    reply = ask_service(OcrRequest("/somewhere/shot.png", "md"))
    assert reply is not None and reply.status == "ok"
    assert reply.output == "md:/somewhere/shot.png" and reply.seconds >= 0
    assert served == [OcrRequest("/somewhere/shot.png", "md")]
    assert ping() == os.getpid()


def test_without_a_service_the_client_creates_no_socket(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("a socket was created although no service runs")

    monkeypatch.setattr(socket.socket, "__init__", refuse)
    assert ask_service(OcrRequest("/x.png")) is None
    assert ping() is None


def test_socket_and_key_are_private_and_removed_on_stop(running) -> None:
    answering, _ = running
    endpoint = answering.endpoint
    folder = Path(endpoint.address).parent
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(endpoint.key_file.stat().st_mode) == 0o600
    assert len(endpoint.key_file.read_bytes()) == 32
    answering.stop()
    assert not Path(endpoint.address).exists() and not endpoint.key_file.exists()
    assert ask_service(OcrRequest("/x.png")) is None
    answering.stop()  # twice is harmless


def test_a_second_service_is_refused_while_the_first_runs(running) -> None:
    with pytest.raises(ServiceError, match=f"already running \\(process {os.getpid()}\\)"):
        OcrService(echo).start()
    assert ask_service(OcrRequest("/still.png")) is not None  # the first one is unharmed


def test_a_client_with_the_wrong_key_gets_nothing_and_the_service_goes_on(running) -> None:
    answering, served = running
    real_key = answering.endpoint.key_file.read_bytes()
    answering.endpoint.key_file.write_bytes(b"x" * 32)
    assert ask_service(OcrRequest("/intruder.png")) is None
    answering.endpoint.key_file.write_bytes(real_key)
    assert ask_service(OcrRequest("/owner.png")) is not None
    assert served == [OcrRequest("/owner.png")]


def test_garbage_on_the_socket_does_not_stop_the_service(running) -> None:
    answering, _ = running
    with socket.socket(socket.AF_UNIX) as raw:
        raw.connect(answering.endpoint.address)
        raw.sendall(b"\x00\x00\x00\x05hello")
    assert ask_service(OcrRequest("/after.png")) is not None


def test_a_failing_handler_becomes_a_failed_reply(data_dir: Path) -> None:
    def broken(request: OcrRequest, stopping: threading.Event) -> OcrReply:
        raise RuntimeError("Exception from src/core.cpp:1\nthe model exploded")

    with serving(broken):
        reply = ask_service(OcrRequest("/boom.png"))
        assert reply is not None and reply.status == "failed"
        assert reply.error == "Could not read /boom.png: the model exploded"
        assert ask_service(OcrRequest("/again.png")) is not None  # still serving


def test_a_stale_socket_from_a_killed_service_is_ignored_then_replaced(data_dir: Path) -> None:
    endpoint = default_endpoint()
    Path(endpoint.address).parent.mkdir(parents=True, mode=0o700)
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(endpoint.address)  # bound, never listening: what kill -9 leaves behind
    stale.close()
    endpoint.key_file.write_bytes(b"k" * 32)
    assert ask_service(OcrRequest("/x.png")) is None
    with serving():
        assert ask_service(OcrRequest("/x.png")) is not None


def test_stop_cuts_the_request_in_progress_short_and_waits_for_it(data_dir: Path) -> None:
    entered, finished = threading.Event(), threading.Event()

    def slow(request: OcrRequest, stopping: threading.Event) -> OcrReply:
        entered.set()
        assert stopping.wait(10)  # a long PDF checks this between pages
        time.sleep(0.3)
        finished.set()
        return echo(request, stopping)

    answering = OcrService(slow)
    answering.start()
    replies: list[OcrReply | None] = []
    client = threading.Thread(target=lambda: replies.append(ask_service(OcrRequest("/a.png"))))
    client.start()
    assert entered.wait(10)
    answering.stop()
    assert finished.is_set()  # stop() waited for the request to end
    client.join(10)
    assert replies == [None]  # a cut-short reply is no answer: the client reads the file itself


def test_a_deep_data_folder_gets_a_short_socket_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(deep))
    endpoint = default_endpoint()
    assert len(os.fsencode(endpoint.address)) <= service._UNIX_PATH_LIMIT
    assert endpoint.key_file.parent == deep / "run"
    with serving():
        assert ask_service(OcrRequest("/deep.png")) is not None


def test_files_are_handed_to_the_open_app_only(data_dir: Path, tmp_path: Path, monkeypatch) -> None:
    import desktop.gui.app as gui_app
    from desktop.cli import main

    shot = tmp_path / "shot.png"
    shot.write_bytes(b"")
    started: list[object] = []
    monkeypatch.setattr(gui_app, "run", lambda **options: started.append(options) or 0)
    assert not hand_to_open_app([shot])  # nothing runs
    with serving():  # `desklens serve` reads, but has no window to attach to
        assert not hand_to_open_app([shot])
    handed: list[list[str]] = []
    with serving(on_open=handed.append):  # the open app
        monkeypatch.chdir(tmp_path)
        assert hand_to_open_app(["shot.png"])
        assert main([str(shot)]) == 0  # `desklens shot.png`: no second window
        assert main(["gui", "--data-dir", str(tmp_path / "other"), str(shot)]) == 0
    assert handed == [[str(shot)], [str(shot)]]  # absolute: the app runs elsewhere
    assert len(started) == 1  # only the explicitly separate instance started


# --- the commands, end to end -----------------------------------------------------------------


def _render(path: Path) -> None:
    image = Image.new("RGB", (560, 120), "white")
    try:
        face = ImageFont.truetype("DejaVuSans.ttf", 20)
    except OSError:
        face = ImageFont.load_default(20)
    ImageDraw.Draw(image).text((20, 40), "Served text 4711 arrives", font=face, fill="black")
    image.save(path)


def _desklens(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        capture_output=True, encoding="utf-8", env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip


def _start_serve(env: dict[str, str], *extra: str) -> tuple[subprocess.Popen[str], ChildLog]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop", "serve", "--threads", "2", *extra],
        stderr=subprocess.PIPE,
        encoding="utf-8",
        env=env,
        cwd=ROOT,
    )  # fmt: skip  (explicit encoding: another test's library may have set an ASCII locale)
    log = ChildLog(proc, "ready")
    try:
        assert log.wait(240), log.text()
    except BaseException:
        proc.kill()  # never leave a service behind
        raise
    return proc, log


def test_serve_answers_desklens_ocr_like_the_local_engine(tmp_path: Path) -> None:
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path / "data")}
    shot, bad = tmp_path / "shot.png", tmp_path / "bad.png"
    _render(shot)
    bad.write_bytes(b"not a picture")
    local = _desklens("ocr", "--no-service", str(shot), env=env)
    assert local.returncode == 0 and "4711" in local.stdout, local.stderr
    proc, log = _start_serve(env)
    try:
        served = _desklens("ocr", str(shot), env=env)
        assert (served.returncode, served.stdout) == (0, local.stdout), served.stderr
        json_out = _desklens("ocr", "--format", "json", str(shot), env=env)
        assert '"source": "shot.png"' in json_out.stdout
        broken = _desklens("ocr", str(bad), env=env)
        assert broken.returncode == 4 and '"bad.png" is not an image' in broken.stderr
        assert "Traceback" not in broken.stderr
        again = _desklens("serve", env=env)
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
    text = log.text()
    assert f"read: {shot}" in text and "failed" in text and "stopped (interrupted)" in text
    assert not Path(default_endpoint_for(env).address).exists()
    after = _desklens("ocr", str(shot), env=env)  # no service: read in-process again
    assert (after.returncode, after.stdout) == (0, local.stdout)


def test_serve_stops_by_itself_when_idle_and_on_sigterm(tmp_path: Path) -> None:
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path / "data")}
    proc, log = _start_serve(env, "--idle-exit", "0.03")
    assert proc.wait(60) == 0
    assert "stopped (no request for 0.03 min)" in log.text()
    proc, log = _start_serve(env)
    proc.terminate()
    assert proc.wait(60) == 0 and "stopped (terminated)" in log.text()
    assert not Path(default_endpoint_for(env).address).exists()


def default_endpoint_for(env: dict[str, str]) -> service.Endpoint:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DESKLENS_DATA_DIR", env["DESKLENS_DATA_DIR"])
        return default_endpoint()
