"""The start-up check before the first QApplication: a missing X library, display or X server
is one sentence with what to install or do (exit 1), never Qt's abort; on a real X server
(Xvfb) the window opens."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
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
        ({"QT_QPA_PLATFORM": "wayland"}, None),
        ({"WAYLAND_DISPLAY": "wayland-0"}, None),
        ({"DISPLAY": "remote-host:10"}, None),  # over ssh: not probed, Qt connects
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
