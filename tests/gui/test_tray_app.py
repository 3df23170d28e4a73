"""Settings > Tray in the app, under a real X server: the open window takes the global
shortcut itself (a real grab, pressed by xdotool's XTEST key events), and with `desklens
tray` running beside it, the tray's shortcut hands the capture to the window."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from xserver import XServer, start_xvfb

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "support" / "tray_app.py"
WAIT_S = 120  # the OCR's warm-up on two busy cores
OVERLAY_TITLE = "DeskLens capture"


class App:
    """The driver process: JSON events out, read on a thread into a queue."""

    def __init__(self, env: dict[str, str], data_dir: Path, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(DRIVER), str(data_dir), *args], env=env, cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.events: queue.Queue[dict] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_errors, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))
        self.events.put({"event": "exited"})

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        self.stderr.extend(self.process.stderr)

    def wait_for(self, name: str) -> dict:
        while True:
            try:
                event = self.events.get(timeout=WAIT_S)
            except queue.Empty:
                pytest.fail(f"no {name!r} event; app stderr:\n{''.join(self.stderr)[-3000:]}")
            if event["event"] == name:
                return event
            if event["event"] == "exited":
                pytest.fail(f"the app exited before {name!r}:\n{''.join(self.stderr)[-3000:]}")

    def close(self) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write("quit\n")
        self.process.stdin.flush()
        bye = self.wait_for("bye")
        self.process.wait(timeout=60)
        return bye


@pytest.fixture
def xserver() -> Iterator[XServer]:
    server = start_xvfb()
    yield server
    server.stop()


def environment(server: XServer, data_dir: Path) -> dict[str, str]:
    return {**server.env, "DESKLENS_DATA_DIR": str(data_dir),
            "DESKLENS_MODELS_DIR": str(data_dir / "no-models"),
            "PYTHONPATH": f"{ROOT}:{ROOT / 'tests' / 'support'}"}  # fmt: skip


def test_the_window_takes_the_shortcut_while_the_tray_setting_is_on(
    xserver: XServer, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    app = App(environment(xserver, data_dir), data_dir)
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
    env = environment(xserver, data_dir)
    app = App(env, data_dir, "--no-tray")
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
