#!/usr/bin/env python3
"""Screenshots of the window at small sizes for docs/GUI.md (issue 29): the compact layout
(sidebar folded away, the Ask AI presets in one menu) at 1024x700, 800x600 and 640x480, the
sidebar opened in a narrow window, and the first-run card with a long error, light and dark.

    Xvfb :9 -screen 0 1400x900x24 &
    DISPLAY=:9 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/small_window_screenshots.py [MODEL_DIR]

MODEL_DIR is a converted model (the tests' tiny INT8 one is enough: no question is asked);
without it the window shows the first-run card. The window is captured with QWidget.grab(),
so no screen-capture tool is needed; menus are not in these pictures.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

SHOTS = ROOT / "docs" / "screenshots"
SIZES = ((1024, 700), (800, 600), (640, 480))


def settle(ms: int = 300) -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    QApplication.processEvents()


def shoot(window, name: str, below: int = 0) -> None:
    """The window as the screen shows it (menus open over it included), and `below` more
    pixels under it (where a menu may reach)."""
    from PySide6.QtGui import QGuiApplication

    settle()
    path = SHOTS / f"{name}.png"
    frame = window.frameGeometry()
    screen = QGuiApplication.primaryScreen()
    height = frame.height() + below
    screen.grabWindow(0, frame.x(), frame.y(), frame.width(), height).save(str(path))
    print(f"wrote {path}")


def attach_sample(window) -> None:
    from gui_support import text_image

    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    picture = text_image("Invoice 2291 total 1,284.50 EUR")
    window.composer.add_images([ImageRef.of(load_image(picture, name="invoice.png"))])


def main() -> int:
    from desktop.gui.app import create_app
    from desktop.gui.settings import AppSettings

    model = sys.argv[1] if len(sys.argv) > 1 else None
    SHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        settings = replace(AppSettings(), theme="light", prepare_ahead=False)
        app, window = create_app(data_dir=folder, model_dir=model, settings=settings)
        while model and not window.model_loaded:
            settle(200)
        attach_sample(window)
        window.composer.editor.setPlainText("What is the total?")
        window.move(0, 0)
        for width, height in SIZES:
            window.resize(width, height)
            shoot(window, f"window-{width}x{height}")
        window.resize(800, 600)
        settle()
        window.page.sidebar_button.click()
        shoot(window, "window-800x600-chats")
        window.page.sidebar_button.click()
        window.resize(640, 480)
        settle()
        from PySide6.QtCore import QTimer

        button = window.composer.ask_menu_button

        def shoot_menu() -> None:
            shoot(window, "window-640x480-ask-menu", below=85)
            button.menu().close()

        QTimer.singleShot(300, shoot_menu)
        button.showMenu()
        settle(1500)  # the menu was shot and closed
        chip_menu(window)
        window.apply_settings(replace(window.settings, theme="dark"))
        window.composer.set_generating(True)  # Stop, as it looks while an answer runs
        shoot(window, "window-640x480-dark")
        window.composer.set_generating(False)
        window.apply_settings(replace(window.settings, theme="light"))
        extracted(window)
        window.close()
        app.processEvents()
    first_run_error()
    return 0


def extracted(window) -> None:
    """At 640x480: the fast OCR's card for the attached invoice (real output)."""
    from desktop.gui.widgets.messages import OcrMessage

    window.extraction.extract_all()
    while not any(isinstance(m, OcrMessage) for m in window.chat.messages()):
        settle(200)
    shoot(window, "window-640x480-extracted")


def chip_menu(window) -> None:
    """An attachment's context menu (Extract text / Remove), opened by a right-click as Qt
    sends it: drawn in the theme's colours, not black (issue 29)."""
    from PySide6.QtCore import QPoint, QTimer
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication, QMenu

    chip = window.composer.chips()[0]

    def shoot_menu() -> None:
        shoot(window, "window-640x480-chip-menu")
        for menu in QApplication.topLevelWidgets():
            if isinstance(menu, QMenu) and menu.isVisible():
                menu.close()

    QTimer.singleShot(300, shoot_menu)
    point = QPoint(chip.width() // 2, chip.height() // 2)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, point, chip.mapToGlobal(point))
    QApplication.sendEvent(chip, event)  # the menu runs its own loop until shot and closed
    settle(800)


def first_run_error() -> None:
    """The set-up card at 640x480 after a failed download, Details open (no model)."""
    import json
    import os

    from desktop.gui.app import create_app
    from desktop.gui.settings import AppSettings

    with tempfile.TemporaryDirectory() as folder:
        os.environ["DESKLENS_MODELS_DIR"] = str(Path(folder) / "models")
        settings = replace(AppSettings(), theme="light")
        app, window = create_app(data_dir=Path(folder) / "data", settings=settings)
        window.resize(640, 480)
        window.move(0, 0)
        box = window.first_run.download
        error = (
            "The download of openvino_language_model.bin stopped: the connection was reset. "
            "What was downloaded so far (412 MB) is kept: Download continues from there."
        )
        for event in (
            {"event": "step", "text": "Checking OpenVINO/Qwen3-VL-2B-Instruct-int8-ov…"},
            {"event": "step", "text": "Downloading 14 files (2.6 GB)…"},
            {"event": "error", "text": error, "code": 1},
        ):
            box._on_line(json.dumps(event))
        box._on_finished(1, False)
        window.first_run.details_button.click()
        shoot(window, "first-run-error-640x480")
        window.close()
        app.processEvents()


if __name__ == "__main__":
    raise SystemExit(main())
