"""The start-up check before the first QApplication: a missing X library, display or X server
is one sentence with what to install or do (exit 1), never Qt's abort, and so is a Wayland
display whose compositor is gone or a platform Qt does not have; on a real X server (Xvfb) the
window opens."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.gui import platform_check

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_xcb_library_names_it_and_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    libraries = {**platform_check.XCB_LIBRARIES, "libxcb-gone.so.9": "libxcb-gone9"}
    monkeypatch.setattr(platform_check, "XCB_LIBRARIES", libraries)
    problem = platform_check.platform_problem({"DISPLAY": ":0"})
    assert problem is not None
    assert "not installed (libxcb-gone.so.9)" in problem
    assert "`sudo apt-get install libxcb-gone9`" in problem and "scripts/dev.sh app" in problem


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "no display was found (DISPLAY is not set)"),
        ({"DISPLAY": ":97"}, "no X server answers at DISPLAY=:97"),
        ({"DISPLAY": "unix:97.0"}, "no X server answers at DISPLAY=unix:97.0"),
        ({"QT_QPA_PLATFORM": "offscreen"}, None),
        ({"QT_QPA_PLATFORM": "wayland"}, "no Wayland compositor answers"),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "names no running Wayland compositor"),
        ({"QT_QPA_PLATFORM": "no-such-platform"}, "is not a platform this Qt has"),
        # A host that is not there made Qt abort (issue 59): now probed, as a local display is
        ({"DISPLAY": "remote-host:10"}, "no X server answers at DISPLAY=remote-host:10"),
        ({"QT_QPA_PLATFORM": "xcb"}, "no display was found"),
    ],
)
def test_the_display_is_checked_unless_another_platform_is_chosen(
    environ: dict[str, str], expected: str | None
) -> None:
    problem = platform_check.platform_problem(environ)
    if sys.platform.startswith("linux") and expected is not None:
        assert problem is not None and expected in problem
    else:
        assert problem is None


def stand_in_compositor(path: Path, answers: bool):
    """A Unix socket where a Wayland compositor's would be, served on a thread: it answers a
    wl_display.sync with the callback's `done` (or, `answers` False, accepts and stays silent)."""
    import socket
    import struct
    import threading

    done = threading.Event()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(4)
    listener.settimeout(0.2)
    held: list[socket.socket] = []

    def serve() -> None:
        while not done.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(client)
            if answers and len(client.recv(12)) == 12:
                client.sendall(struct.pack("=III", 2, (12 << 16) | 0, 1))

    thread = threading.Thread(target=serve)
    thread.start()
    return done, thread, listener, held


@pytest.fixture(params=[True])
def compositor(tmp_path: Path, request: pytest.FixtureRequest):
    done, thread, listener, held = stand_in_compositor(tmp_path / "wayland-7", request.param)
    try:
        yield tmp_path / "wayland-7"
    finally:
        done.set()
        thread.join(timeout=10)
        for client in held:
            client.close()
        listener.close()


@pytest.mark.parametrize("compositor", [False], indirect=True)
def test_a_wayland_socket_that_accepts_but_never_answers_is_a_sentence(compositor: Path) -> None:
    import time

    env = {"XDG_RUNTIME_DIR": str(compositor.parent), "WAYLAND_DISPLAY": "wayland-7"}
    started = time.monotonic()
    problem = platform_check.platform_problem(env)
    assert time.monotonic() - started < platform_check.WAYLAND_ANSWER_S + 3
    assert problem is not None and "WAYLAND_DISPLAY=wayland-7 names no running" in problem
    assert "answered within 2 s" in problem
    platform_check.forget_dead_wayland(env)
    assert "WAYLAND_DISPLAY" not in env  # with an X server, Qt goes there instead


def test_a_live_wayland_socket_is_left_to_qt(compositor: Path) -> None:
    runtime = {"XDG_RUNTIME_DIR": str(compositor.parent)}
    assert platform_check.platform_problem({**runtime, "WAYLAND_DISPLAY": "wayland-7"}) is None
    assert platform_check.platform_problem({"WAYLAND_DISPLAY": str(compositor)}) is None
    chosen = {**runtime, "WAYLAND_DISPLAY": "wayland-7", "QT_QPA_PLATFORM": "wayland"}
    assert platform_check.platform_problem(chosen) is None
    env = {**runtime, "WAYLAND_DISPLAY": "wayland-7"}
    platform_check.forget_dead_wayland(env)
    assert env["WAYLAND_DISPLAY"] == "wayland-7"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check is Linux's")
@pytest.mark.parametrize("kind", ["missing", "a plain file", "nobody listening", "no runtime dir"])
def test_a_wayland_display_without_a_compositor_is_one_sentence(tmp_path: Path, kind) -> None:
    import socket

    env = {"XDG_RUNTIME_DIR": str(tmp_path), "WAYLAND_DISPLAY": "wayland-3"}
    if kind == "a plain file":
        (tmp_path / "wayland-3").write_text("")
    elif kind == "nobody listening":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
            gone.bind(str(tmp_path / "wayland-3"))  # the socket file stays, no one accepts
    elif kind == "no runtime dir":
        del env["XDG_RUNTIME_DIR"]
    problem = platform_check.platform_problem(env)
    assert problem is not None and "WAYLAND_DISPLAY=wayland-3 names no running" in problem
    problem = platform_check.platform_problem({**env, "DISPLAY": ":97"})
    assert problem is not None and "no X server answers at DISPLAY=:97" in problem
    problem = platform_check.platform_problem({**env, "QT_QPA_PLATFORM": "wayland"})
    assert problem is not None and "no Wayland compositor answers" in problem
    platform_check.forget_dead_wayland(env)
    assert "WAYLAND_DISPLAY" not in env  # Qt then goes straight to X11


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the check is Linux's")
@pytest.mark.parametrize("command", ["gui", "capture"])
def test_a_dead_wayland_display_is_a_sentence_not_an_abort(tmp_path: Path, command: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
    env.update(WAYLAND_DISPLAY="wayland-gone", XDG_RUNTIME_DIR=str(tmp_path))
    env.update(DESKLENS_DATA_DIR=str(tmp_path / "data"))
    result = subprocess.run(
        [sys.executable, "-m", "desktop", command],
        capture_output=True, encoding="utf-8", env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr  # not -6 (SIGABRT)
    [line] = result.stderr.strip().splitlines()
    assert "WAYLAND_DISPLAY=wayland-gone names no running Wayland compositor" in line
    assert "Traceback" not in result.stderr and "qt.qpa" not in result.stderr


def test_desklens_without_a_display_says_so_instead_of_aborting(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM",
                                                            "WAYLAND_DISPLAY")}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "desktop", "gui", "--data-dir", str(tmp_path)],
        capture_output=True, encoding="utf-8", env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1  # not -6 (SIGABRT)
    assert result.stderr.startswith("desklens: error: DeskLens cannot open its window: no display")
    assert "Traceback" not in result.stderr


def test_the_window_opens_on_a_real_x_server(tmp_path: Path) -> None:
    if shutil.which("Xvfb") is None or shutil.which("xdotool") is None:
        pytest.skip("needs Xvfb and xdotool (Debian: xvfb xdotool)")
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,), stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write)
    try:
        with os.fdopen(read) as ready:  # Xvfb writes its display number once it listens
            display = f":{ready.readline().strip()}"
        assert platform_check.platform_problem({"DISPLAY": display}) is None
        _window_appears(display, tmp_path)
    finally:
        server.terminate()
        server.wait(30)


def _window_appears(display: str, data_dir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    env.update(DISPLAY=display, DESKLENS_MODELS_DIR=str(data_dir / "no-models"))
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop", "gui", "--data-dir", str(data_dir)],
        stderr=subprocess.PIPE, encoding="utf-8", env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        found = subprocess.run(
            ["xdotool", "search", "--sync", "--onlyvisible", "--name", "DeskLens"],
            capture_output=True, env=env, timeout=180,
        )  # fmt: skip
        assert found.returncode == 0 and found.stdout.strip(), app.poll()
    finally:
        app.send_signal(signal.SIGTERM)
        _, stderr = app.communicate(timeout=60)
    assert app.returncode != -signal.SIGABRT, stderr
    assert "could not load the Qt platform plugin" not in stderr


@pytest.fixture
def silent_x_server() -> Iterator[int]:
    """An abstract-namespace X socket (:N) that accepts and never says a word."""
    for number in range(5731, 5831):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(f"\0/tmp/.X11-unix/X{number}")
        except OSError:
            listener.close()
            continue
        listener.listen(8)
        with listener:
            yield number
        return
    pytest.fail("no free display number")


def test_an_x_socket_that_never_answers_is_no_x_server(silent_x_server: int) -> None:
    from desktop.gui.platform_check import X_ANSWER_S, x_server_answers

    started = time.monotonic()
    assert not x_server_answers(f":{silent_x_server}")
    assert time.monotonic() - started < X_ANSWER_S + 1


@pytest.mark.parametrize("command", ["gui", "tray"])
def test_a_silent_or_absent_x_server_is_a_sentence_not_a_hang_or_an_abort(
    tmp_path: Path, silent_x_server: int, command: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}
    for display in (f":{silent_x_server}", "nohost:0", "\x1b]0;pwned\x07:0"):
        result = subprocess.run(
            [sys.executable, "-m", "desktop", command],
            capture_output=True, encoding="utf-8", cwd=ROOT, timeout=60,
            env={**env, "DISPLAY": display, "DESKLENS_DATA_DIR": str(tmp_path)},
        )  # fmt: skip
        assert result.returncode == 1, (display, result)  # not 134 (SIGABRT), not a hang
        assert "cannot open its window" in result.stderr and "Traceback" not in result.stderr
        assert "\x1b" not in result.stderr and "\x07" not in result.stderr


def test_an_x_server_that_refuses_the_setup_still_answers() -> None:
    from desktop.gui.platform_check import x_server_answers

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        assert port > 6000  # an ephemeral port: display N is port 6000 + N
        replier = threading.Thread(target=lambda: listener.accept()[0].sendall(b"\0"))
        replier.start()
        assert x_server_answers(f"127.0.0.1:{port - 6000}")
        replier.join(10)
