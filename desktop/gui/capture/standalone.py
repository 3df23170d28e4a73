"""`desklens capture` without an open window: this process freezes the screens, picks the
region, reads it with a one-shot OCR, prints the text and copies it; "ask" starts the app
with the capture attached and the box picker open on it, as a capture in the window has."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from desktop.cli import exit_codes
from desktop.gui.capture.grab import grab_screens
from desktop.gui.capture.open_app import CropNotSaved, open_app_with
from desktop.gui.capture.overlay import HINT, Capture, RegionPicker, hint_for
from desktop.gui.capture.windows import visible_windows
from desktop.gui.settings import SettingsStore
from desktop.gui.termination import quit_on_termination


def pick_region(hint: str = HINT) -> tuple[Capture | None, str]:
    """Runs the overlay (`hint`: its line) until the user picks or cancels: (the capture, "")
    or (None, why)."""
    app = QApplication.instance() or _application()
    outcome: dict[str, object] = {"why": "Cancelled."}
    picker = RegionPicker()

    def picked(capture: Capture) -> None:
        outcome["capture"] = capture
        app.quit()

    def failed(sentence: str) -> None:
        outcome["why"] = sentence
        app.quit()

    picker.picked.connect(picked)
    picker.cancelled.connect(app.quit)
    grab_screens(lambda frozen: picker.start(frozen, visible_windows(), hint), failed)
    if "capture" not in outcome and outcome["why"] == "Cancelled.":
        app.exec()
    capture = outcome.get("capture")
    return (capture, "") if isinstance(capture, Capture) else (None, str(outcome["why"]))


def capture_once(mode: str, data_dir: Path, *, hold_s: float) -> int:
    action = mode or SettingsStore(data_dir).load().capture_action
    capture, why = pick_region(hint_for(action))
    if capture is None:
        print(f"desklens capture: {why}", file=sys.stderr)
        return exit_codes.INTERRUPTED if why == "Cancelled." else exit_codes.FAILED
    if capture.modifiers & Qt.KeyboardModifier.ShiftModifier:
        action = "ask" if action == "copy" else "copy"
    if action == "ask":
        return _open_app_with(capture)
    return _copy_text(capture, hold_s)


def _open_app_with(capture: Capture) -> int:
    try:
        open_app_with(capture.image)
    except CropNotSaved as error:
        print(f"desklens capture: error: could not write {error.path}", file=sys.stderr)
        return exit_codes.FAILED
    return exit_codes.OK


def _copy_text(capture: Capture, hold_s: float) -> int:
    from desktop.core.ocr import OcrEngine
    from desktop.gui.widgets.thumbnails import load_qimage

    image = load_qimage(capture.image, "capture.png")
    text = OcrEngine().extract(image).text()
    print(text)
    if not text.strip():
        print("desklens capture: no text found in the region.", file=sys.stderr)
        return exit_codes.OK
    clipboard = QGuiApplication.clipboard()
    clipboard.setText(text)
    if hold_s > 0 and QGuiApplication.platformName() in ("xcb", "wayland"):
        _hold_clipboard(hold_s)
    return exit_codes.OK


def _hold_clipboard(seconds: float) -> None:
    """Serve the copied text until another program copies something, or `seconds` pass."""
    app = QApplication.instance()
    assert app is not None
    clipboard = QGuiApplication.clipboard()
    clipboard.dataChanged.connect(lambda: None if clipboard.ownsClipboard() else app.quit())
    QTimer.singleShot(round(seconds * 1000), app.quit)
    app.exec()


def _application() -> QApplication:
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    app = QApplication(sys.argv[:1])
    app.setApplicationName("DeskLens")
    app.setQuitOnLastWindowClosed(False)  # the overlay closing is not the end
    quit_on_termination(app)  # Ctrl+C at the overlay: "Cancelled.", as Escape (app owns it)
    return app
