#!/usr/bin/env python3
"""Screenshots of Settings > Model > A server for docs/GUI.md: the dialog after Test
connection, and the window after an answer from the server.

    Xvfb :9 -screen 0 1400x900x24 &
    DISPLAY=:9 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/model_server_screenshots.py MODEL_DIR

MODEL_DIR is a converted model (the tests' tiny INT8 one: its answers are gibberish). The
"server" is a second DeskLens's `serve --api` stack on 127.0.0.1 in this process, serving
that model (tests/support/served_model.py); the app runs on an empty data folder. Each
picture is the widget as Qt paints it (`QWidget.grab`), without the window frame.
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

SHOTS = ROOT / "docs" / "screenshots"


def settle(ms: int = 300) -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    QApplication.processEvents()


def until(done, ms: int = 120_000) -> None:
    waited = 0
    while not done() and waited < ms:
        settle(100)
        waited += 100
    if not done():
        raise SystemExit("timed out")


def shoot(widget, name: str) -> None:
    """The widget as Qt paints it (no window frame)."""
    settle()
    widget.grab().save(str(SHOTS / f"{name}.png"))
    print(f"wrote {SHOTS / name}.png")


def main(model_dir: Path) -> int:
    from gui_support import text_image
    from PySide6.QtWidgets import QMessageBox
    from served_model import serve_model

    from desktop.core.engine import VLMEngine
    from desktop.core.images import load_image
    from desktop.gui.app import create_app
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.panels.settings_dialog import SettingsDialog

    work = Path(tempfile.mkdtemp(prefix="desklens-shots-"))
    served = serve_model(VLMEngine.load(model_dir), work / "server")
    app, window = create_app(data_dir=work / "data", model_dir=model_dir)
    window.move(0, 0)
    window.resize(1280, 800)
    window.show()
    until(lambda: window.model_loaded)
    window.apply_settings(replace(window.settings, max_new_tokens=24))

    def fill_and_test(dialog: SettingsDialog) -> int:
        rows = dialog.source
        dialog.show()
        dialog.move(window.geometry().center() - dialog.rect().center())
        rows.server_radio.click()
        rows.url_edit.setText(served.url)
        rows.key_edit.setText(served.key)
        rows.test_button.click()
        until(lambda: rows.test_button.isEnabled())
        shoot(dialog, "settings-server")
        dialog.accept()
        until(lambda: not rows.busy)
        return dialog.result()

    SettingsDialog.exec = fill_and_test
    QMessageBox.question = lambda *a: QMessageBox.StandardButton.Yes
    window.open_settings()
    until(lambda: window.model_loaded and bool(window.engine.server))

    picture = ImageRef.of(load_image(text_image("Invoice 2291 total 48.10"), name="invoice.png"))
    window.composer.add_images([picture])
    window.composer.editor.setPlainText("What is the total of this invoice?")
    answered: list[object] = []
    window.asking.answer_shown.connect(answered.append)
    window.composer.send_button.click()
    until(lambda: bool(answered))
    shoot(window, "server-answer")
    window.close()
    served.stop()
    app.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
