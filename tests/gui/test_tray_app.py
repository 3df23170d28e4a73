"""Settings > Tray in the app, under a real X server: the open window takes the global
shortcut itself (a real grab, pressed by xdotool's XTEST key events), and with `desklens
tray` running beside it, the tray's shortcut hands the capture to the window."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from driver_process import ROOT, DriverProcess, driver_env
from xserver import XServer, start_xvfb

DRIVER = ROOT / "tests" / "support" / "tray_app.py"
OVERLAY_TITLE = "DeskLens capture"


@pytest.fixture
def xserver() -> Iterator[XServer]:
    server = start_xvfb()
    yield server
    server.stop()


def test_the_window_takes_the_shortcut_while_the_tray_setting_is_on(
    xserver: XServer, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    app = DriverProcess(DRIVER, data_dir, env=driver_env(xserver.env, data_dir))
    try:
        ready = app.wait_for("ready")
        assert ready["grabbed"] == "Ctrl+Alt+Shift+T"
        # A bare X server has no tray; at start that is worth no notice (the keys work).
        assert ready["notice"] == ""
        xserver.xdotool("key", "ctrl+alt+shift+t")
        app.wait_for("overlay")
        xserver.xdotool("search", "--sync", "--onlyvisible", "--name", OVERLAY_TITLE)
        xserver.xdotool("key", "Escape")
        app.wait_for("cancelled")
    finally:
        bye = app.close()
    assert bye["grabbed"] == ""  # closing the window gave the keys back
    assert "Traceback" not in "".join(app.stderr)


def test_desklens_tray_hands_its_shortcut_to_the_open_window(
    xserver: XServer, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    env = driver_env(xserver.env, data_dir)
    app = DriverProcess(DRIVER, data_dir, "--no-tray", env=env)
    tray = subprocess.Popen([sys.executable, "-m", "desktop", "tray"], env=env, cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert app.wait_for("ready")["grabbed"] == ""  # the setting is off: no keys taken
        app.wait_for("ocr-ready")
        assert tray.stderr is not None
        while "captures a region." not in (line := tray.stderr.readline()):
            assert line, "desklens tray exited before taking the shortcut"
        xserver.xdotool("key", "ctrl+alt+shift+t")
        app.wait_for("overlay")  # the window's own capture, not the tray's
        xserver.xdotool("key", "Escape")
        app.wait_for("cancelled")
    finally:
        tray.terminate()
        app.close()
    assert tray.wait(timeout=60) == 0
