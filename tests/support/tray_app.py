"""The DeskLens app under a real X server with Settings > Tray on (or off: `--no-tray`), for
tests/gui/test_tray_app.py: a child process, since the test process runs Qt offscreen.

Events go out as JSON lines on stdout: "ready" (with what the tray could not do), "ocr-ready"
(the service answers `desklens capture` and the tray process from here on), "overlay" (the
window's capture overlay is up), "cancelled", "bye". Any line on stdin closes the window.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QSocketNotifier
from PySide6.QtGui import QGuiApplication

from desktop.gui.app import create_app
from desktop.gui.settings import AppSettings


def say(event: str, **data: object) -> None:
    print(json.dumps({"event": event, **data}), flush=True)


def main() -> int:
    tray = "--no-tray" not in sys.argv
    app, window = create_app(data_dir=Path(sys.argv[1]), settings=AppSettings(tray=tray))
    window.capturing.overlay_shown.connect(lambda: say("overlay"))
    window.capturing.cancelled.connect(lambda: say("cancelled"))
    window.ocr.worker.ready.connect(lambda: say("ocr-ready"))
    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)

    def close() -> None:
        notifier.setEnabled(False)
        window.close()
        say("bye", grabbed=window.tray.hotkey.label)
        QGuiApplication.quit()

    notifier.activated.connect(close)
    say("ready", grabbed=window.tray.hotkey.label, notice=window.notice.text())
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
