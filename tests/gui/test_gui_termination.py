"""A logout, `kill` or Ctrl+C closes the app as the user would: the window's close runs (it
stops the answer, keeps its words and joins the threads), and the process exits 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from child_log import APP_STARTED, ChildLog
from cli_runner import ROOT

from desktop.gui.settings import SettingsStore


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_terminating_signal_closes_the_window_and_exits_cleanly(tmp_path: Path, number: int):
    data = tmp_path / "data"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "DESKLENS_MODELS_DIR": str(tmp_path)}
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop", "gui", "--data-dir", str(data)],
        stderr=subprocess.PIPE, encoding="utf-8", env=env, cwd=ROOT,
    )  # fmt: skip
    log = ChildLog(app, APP_STARTED)
    try:
        assert log.wait(120), log.text()  # the window is up, the handler installed
        app.send_signal(number)
        assert app.wait(120) == 0, log.text()
    finally:
        app.kill()
    text = log.text()
    assert f"{signal.Signals(number).name} received: closing" in text
    assert "Traceback" not in text
    # Only the window's close writes its geometry: it ran before the process ended.
    assert "geometry=" in SettingsStore(data).path.read_text()
