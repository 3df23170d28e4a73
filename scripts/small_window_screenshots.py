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


def shoot(window, name: str) -> None:
    settle()
    path = SHOTS / f"{name}.png"
    window.grab().save(str(path))
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
        if model:
            from gui_support import SIGNAL_TIMEOUT_MS  # noqa: F401  (the support path works)

            while not window.model_loaded:
                settle(200)
        attach_sample(window)
        window.composer.editor.setPlainText("What is the total?")
        for width, height in SIZES:
            window.resize(width, height)
            shoot(window, f"window-{width}x{height}")
        window.resize(800, 600)
        settle()
        window.page.sidebar_button.click()
        shoot(window, "window-800x600-chats")
        window.page.sidebar_button.click()
        window.apply_settings(replace(window.settings, theme="dark"))
        window.resize(640, 480)
        shoot(window, "window-640x480-dark")
        window.close()
        app.processEvents()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
