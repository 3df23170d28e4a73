"""`desklens tray` as a user runs it, on a private Xvfb with no system tray: it says there is
no tray, and the real key chord (xdotool's XTEST events) brings up the capture overlay, whose
region's text ends up on the X clipboard; SIGTERM ends it cleanly; a second tray on the same
data folder, or another program holding the keys, is told so."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from xserver import XServer, start_xvfb

from desktop.cli import exit_codes, main

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "tests" / "support" / "capture_app.py"
TARGET_TEXT = "Invoice 2041 total 118.40 EUR"  # capture_app.TARGET_TEXT
OVERLAY_TITLE = "DeskLens capture"
WAIT_S = 120  # a first OCR on two busy cores
NO_TRAY = "desklens tray: This desktop has no system tray, so DeskLens shows no tray icon"
TAKEN = "Ctrl+Alt+Shift+T is already taken by another program on this X display"
# Reads the X clipboard as another program would (Qt asks its owner, the tray process).
READ_CLIPBOARD = (
    "from PySide6.QtGui import QGuiApplication as A; a = A([]); print(a.clipboard().text())"
)


class Tray:
    """A `desklens tray` process; its stderr lines are read on a thread into a queue."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "desktop", "tray", *args], env=env, cwd=ROOT,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("<exited>")

    def wait_for(self, text: str) -> str:
        while True:
            try:
                line = self.lines.get(timeout=WAIT_S)
            except queue.Empty:
                pytest.fail(f"no {text!r} from desklens tray; it said:\n" + "\n".join(self.seen))
            self.seen.append(line)
            if text in line:
                return line
            if line == "<exited>":
                pytest.fail(f"desklens tray exited before {text!r}:\n" + "\n".join(self.seen))

    def terminate(self) -> int:
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=60)
        self.wait_for("<exited>")
        return code


@pytest.fixture
def desktop(tmp_path: Path) -> Iterator[tuple[XServer, dict[str, str], dict]]:
    """Xvfb (no tray, no window manager) with the window showing TARGET_TEXT."""
    server = start_xvfb()
    env = {**server.env, "DESKLENS_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": f"{ROOT}:{ROOT / 'tests' / 'support'}"}  # fmt: skip
    target = subprocess.Popen(
        [sys.executable, str(TARGET), "--target-only"], env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    try:
        assert target.stdout is not None
        ready = json.loads(target.stdout.readline())
        yield server, env, ready
    finally:
        target.kill()
        server.stop()


def inside(target: list[int], margin: int = 6) -> tuple[tuple[int, int], tuple[int, int]]:
    x, y, width, height = target
    return (x + margin, y + margin), (x + width - margin, y + height - margin)


def test_the_key_chord_captures_a_region_to_the_clipboard_without_a_tray(desktop) -> None:
    server, env, ready = desktop
    tray = Tray(env)
    try:
        assert tray.wait_for(NO_TRAY).endswith("the global shortcut works without it.")
        tray.wait_for("desklens tray: Ctrl+Alt+Shift+T captures a region.")
        server.xdotool("key", "ctrl+alt+shift+t")  # a real key event, through the X server
        # Waits (by X events, not by time) until the overlay window is on the screen.
        server.xdotool("search", "--sync", "--onlyvisible", "--name", OVERLAY_TITLE)
        server.drag(*inside(ready["target"]))
        tray.wait_for(f"Copied the region's text ({len(TARGET_TEXT)} characters)")
        clipboard = subprocess.run([sys.executable, "-c", READ_CLIPBOARD], env=env,
                                   capture_output=True, text=True, timeout=60)  # fmt: skip
        assert clipboard.stdout.strip() == TARGET_TEXT
        assert TARGET_TEXT not in "\n".join(tray.seen)  # the log says how much, not what
    finally:
        code = tray.terminate()
    assert code == exit_codes.OK
    assert "Traceback" not in "\n".join(tray.seen)


def test_a_second_tray_or_a_taken_shortcut_is_told_so(desktop, tmp_path: Path) -> None:
    server, env, _ready = desktop
    first = Tray(env)
    try:
        first.wait_for("captures a region.")
        again = subprocess.run([sys.executable, "-m", "desktop", "tray"], env=env, cwd=ROOT,
                               capture_output=True, text=True, timeout=120)  # fmt: skip
        assert again.returncode == exit_codes.FAILED
        assert "the DeskLens tray is already running (process" in again.stderr
        # Another data folder, so another tray may run: the keys are the first one's.
        other = {**env, "DESKLENS_DATA_DIR": str(tmp_path / "other")}
        taken = subprocess.run([sys.executable, "-m", "desktop", "tray"], env=other, cwd=ROOT,
                               capture_output=True, text=True, timeout=120)  # fmt: skip
        assert taken.returncode == exit_codes.FAILED
        assert f"desklens tray: no global shortcut: {TAKEN}" in taken.stderr
        assert "with neither a tray icon nor a global shortcut" in taken.stderr
        second = Tray(other, "--shortcut", "Ctrl+Alt+Shift+Y")
        try:
            second.wait_for("desklens tray: Ctrl+Alt+Shift+Y captures a region.")
        finally:
            assert second.terminate() == exit_codes.OK
    finally:
        assert first.terminate() == exit_codes.OK
    assert "Traceback" not in "\n".join(first.seen + second.seen)


def test_a_bad_shortcut_is_a_usage_error(capsys) -> None:
    assert main(["tray", "--shortcut", "Ctrl+Banana"]) == exit_codes.USAGE
    assert capsys.readouterr().err == (
        "desklens tray: error: 'Banana' in the shortcut 'Ctrl+Banana' is not a key DeskLens "
        "can grab (a letter, a digit, F1-F24, or one of Space, Print, Insert, Delete, Home, "
        "End, PageUp, PageDown, Pause, Tab, Enter, Backspace, Up, Down, Left, Right).\n"
    )


def test_no_shortcut_and_a_shortcut_exclude_each_other(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["tray", "--no-shortcut", "--shortcut", "Ctrl+Alt+T"])
    assert exited.value.code == exit_codes.USAGE
    assert "not allowed with" in capsys.readouterr().err


def test_without_a_display_it_says_so_instead_of_aborting(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY")}  # fmt: skip
    env["DESKLENS_DATA_DIR"] = str(tmp_path / "data")
    result = subprocess.run([sys.executable, "-m", "desktop", "tray"], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == exit_codes.FAILED  # not -6 (Qt's SIGABRT)
    assert result.stderr.startswith("desklens tray: error: DeskLens cannot open its window: no")
    assert "Traceback" not in result.stderr
