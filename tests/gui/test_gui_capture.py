"""Screen capture under a real X server: each test's app runs in a child process on its own
Xvfb with QT_QPA_PLATFORM=xcb (tests/support/capture_app.py), and the overlay is driven by
real pointer and key events from xdotool (XTEST), as a user's mouse would."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from driver_process import ROOT, DriverProcess, driver_env
from xserver import XServer, start_xvfb

DRIVER = ROOT / "tests" / "support" / "capture_app.py"
TARGET_TEXT = "Invoice 2041 total 118.40 EUR"  # capture_app.TARGET_TEXT
OVERLAY_TITLE = "DeskLens capture"
TARGET_TITLE = "DeskLens test target"  # capture_app.TARGET_TITLE
# A capture's outcomes: waiting for one, another is a failure at once.
OUTCOMES = ("failed", "copied", "attached", "cancelled")


def start_app(
    tmp_path: Path, extra_env: dict[str, str]
) -> Iterator[tuple[XServer, DriverProcess, dict]]:
    server = start_xvfb()
    data_dir = tmp_path / "data"
    env = driver_env(server.env, data_dir, **extra_env)
    app = DriverProcess(DRIVER, data_dir, env=env, fail_on=OUTCOMES)
    try:
        ready = app.wait_for("ready")
        app.wait_for("ocr-ready")  # the service answers `desklens capture` from here on
        yield server, app, ready
        assert app.close()["gui_thread_writes"] == []  # the GUI thread wrote nothing
    finally:
        if app.process.poll() is None:
            app.process.kill()
        server.stop()


@pytest.fixture(scope="module")
def desktop(tmp_path_factory) -> Iterator[tuple[XServer, DriverProcess, dict]]:
    yield from start_app(tmp_path_factory.mktemp("capture"), {})


@pytest.fixture(scope="module")
def hidpi_desktop(tmp_path_factory) -> Iterator[tuple[XServer, DriverProcess, dict]]:
    yield from start_app(tmp_path_factory.mktemp("capture-hidpi"), {"QT_SCALE_FACTOR": "2"})


def inside(target: list[int], margin: int = 6) -> tuple[tuple[int, int], tuple[int, int]]:
    """Drag corners just inside the target window's white margin (device pixels): what is
    around it (the app's window) has text of its own."""
    x, y, width, height = target
    return (x + margin, y + margin), (x + width - margin, y + height - margin)


def test_a_dragged_region_is_read_to_the_clipboard_and_undo_restores_it(desktop) -> None:
    server, app, ready = desktop
    app.send("set-clipboard what was there")
    app.wait_for("clipboard")
    app.send("capture copy")
    app.wait_for("overlay")
    start, end = inside(ready["target"])
    server.drag(start, end)
    copied = app.wait_for("copied")
    assert copied["text"] == TARGET_TEXT
    assert copied["clipboard"] == TARGET_TEXT
    assert copied["note"] == f"Copied: {TARGET_TEXT}"
    assert copied["crop"] == [end[0] - start[0], end[1] - start[1]]
    server.xdotool("mousemove", *copied["undo"], "click", "1")  # the note's Undo
    app.send("clipboard")
    assert app.wait_for("clipboard")["text"] == "what was there"


def test_the_capture_button_steps_the_window_aside_and_brings_it_back(desktop) -> None:
    server, app, ready = desktop
    server.xdotool("mousemove", *ready["capture_button"], "click", "1")
    app.wait_for("overlay")  # the window hid first, so it is not in the frozen picture
    server.drag(*inside(ready["target"]))
    copied = app.wait_for("copied")
    assert copied["text"] == TARGET_TEXT
    assert copied["window_visible"]  # back where it was


def test_escape_cancels_with_nothing_copied(desktop) -> None:
    server, app, ready = desktop
    app.send("set-clipboard kept")
    app.wait_for("clipboard")
    app.send("capture copy")
    app.wait_for("overlay")
    x, y, _w, _h = ready["target"]
    server.xdotool("mousemove", x, y, "mousedown", "1", "mousemove", x + 50, y + 30)
    server.xdotool("key", "Escape")
    assert app.wait_for("cancelled")["clipboard"] == "kept"  # wait_for fails on a "copied"
    server.xdotool("mouseup", "1")
    app.send("clipboard")
    assert app.wait_for("clipboard")["text"] == "kept"


def test_a_click_takes_the_window_under_the_cursor(desktop) -> None:
    server, app, ready = desktop
    app.send("capture copy")
    app.wait_for("overlay")
    x, y, width, height = ready["target"]
    server.xdotool("mousemove", x + width // 2, y + height // 2, "click", "1")
    copied = app.wait_for("copied")
    assert copied["area"] == ready["target"]  # exactly the window, found through Xlib
    assert copied["text"] == TARGET_TEXT


def test_ask_about_it_attaches_the_crop_and_shift_picks_the_other_action(desktop) -> None:
    server, app, ready = desktop
    app.send("capture ask")
    app.wait_for("overlay")
    start, end = inside(ready["target"], margin=4)
    server.drag(start, end)
    attached = app.wait_for("attached")
    assert attached["size"] == attached["crop"] == [end[0] - start[0], end[1] - start[1]]
    assert attached["attachments"] == 1 and attached["window_visible"]

    app.send("capture copy")  # copy, but Shift held on release: ask
    app.wait_for("overlay")
    server.drag(start, end, shift=True)
    assert app.wait_for("attached")["attachments"] == 2


def test_desklens_capture_hands_off_to_the_running_app(desktop) -> None:
    server, app, ready = desktop
    # Above the app's window again, which "ask about it" raised (X11 raises as asked).
    server.xdotool("search", "--name", TARGET_TITLE, "windowraise")
    done = subprocess.run(
        [sys.executable, "-m", "desktop", "capture", "--copy"], env=app.env, cwd=ROOT,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # the window reads it; this process printed and started nothing
    app.wait_for("overlay")  # shown by the app's process
    server.drag(*inside(ready["target"]))
    assert app.wait_for("copied")["text"] == TARGET_TEXT


def test_at_scale_2_the_crop_has_the_screens_device_pixels(hidpi_desktop) -> None:
    server, app, ready = hidpi_desktop
    assert ready["scale"] == 2.0
    x, y, width, height = ready["target"]
    assert (width, height) == (1120, 160)  # the 560x80 logical window, in device pixels
    app.send("capture copy")
    app.wait_for("overlay")
    start, end = inside(ready["target"], margin=10)
    server.drag(start, end)
    copied = app.wait_for("copied")
    # xdotool moves in device pixels; the overlay sees half as many logical ones. The crop
    # has the device pixels again (up to the rounding of an odd device pixel).
    crop_width, crop_height = copied["crop"]
    assert abs(crop_width - (end[0] - start[0])) <= 2
    assert abs(crop_height - (end[1] - start[1])) <= 2
    assert copied["text"] == TARGET_TEXT


def test_desklens_capture_without_the_app_reads_the_region_itself(tmp_path: Path) -> None:
    server = start_xvfb()
    env = {**server.env, "DESKLENS_DATA_DIR": str(tmp_path / "data"),
           "PYTHONPATH": f"{ROOT}:{ROOT / 'tests' / 'support'}"}  # fmt: skip
    target = subprocess.Popen(
        [sys.executable, str(DRIVER), "--target-only"], env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT,
    )  # fmt: skip
    try:
        assert target.stdout is not None
        ready = json.loads(target.stdout.readline())
        capture = subprocess.Popen(
            [sys.executable, "-m", "desktop", "capture", "--copy", "--hold", "0"], env=env,
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        # Waits (by X events, not by time) until the overlay window is on the screen.
        server.xdotool("search", "--sync", "--onlyvisible", "--name", OVERLAY_TITLE)
        server.drag(*inside(ready["target"]))
        out, err = capture.communicate(timeout=180)
        assert capture.returncode == 0, err
        assert out.strip() == TARGET_TEXT
    finally:
        target.kill()
        server.stop()


def test_ctrl_c_at_the_overlay_cancels_like_escape(tmp_path: Path) -> None:
    server = start_xvfb()
    env = {**server.env, "DESKLENS_DATA_DIR": str(tmp_path / "data")}
    capture = subprocess.Popen(
        [sys.executable, "-m", "desktop", "capture", "--copy", "--hold", "0"], env=env,
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        server.xdotool("search", "--sync", "--onlyvisible", "--name", OVERLAY_TITLE)
        capture.send_signal(signal.SIGINT)
        out, err = capture.communicate(timeout=60)  # before: no Python ran, so it never ended
        assert capture.returncode == 130, err
        assert "Cancelled." in err and "Traceback" not in err
        assert out == ""
    finally:
        capture.kill()
        server.stop()
