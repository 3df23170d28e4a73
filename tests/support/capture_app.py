"""The DeskLens app under a real X server, for tests/gui/test_gui_capture.py (run as a child
process: the test process itself runs Qt offscreen, and a process has one Qt platform).

On screen: the app's window and, on top, a window with TARGET_TEXT (`--target-only`: that
window alone). Commands come one a line
on stdin ("capture copy|ask|-", "clipboard", "set-clipboard TEXT", "quit"); events go out as
JSON lines on stdout ("ready", "ocr-ready", "overlay", "copied", "attached", "cancelled",
"failed", "clipboard", "bye"). Every history and settings write is recorded with its thread,
and "bye" lists those made on the GUI thread (there must be none).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from PySide6.QtCore import QObject, QRect, QSocketNotifier, Qt, QTimer
from PySide6.QtGui import QFont, QGuiApplication, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from desktop.core.history import HistoryStore
from desktop.gui.app import create_app
from desktop.gui.settings import SettingsStore

TARGET_TEXT = "Invoice 2041 total 118.40 EUR"
TARGET_TITLE = "DeskLens test target"
TARGET_GEOMETRY = QRect(40, 120, 560, 80)  # logical pixels
WRITES = [
    (HistoryStore, name)
    for name in ("create_conversation", "rename_conversation", "add_message", "update_message")
] + [(SettingsStore, "save"), (SettingsStore, "set_window_state")]

gui_thread_writes: list[str] = []


def record_writes() -> None:
    for owner, name in WRITES:
        original = getattr(owner, name)

        def recorder(*args, _original=original, _name=name, **kwargs):
            if threading.current_thread() is threading.main_thread():
                gui_thread_writes.append(_name)
            return _original(*args, **kwargs)

        setattr(owner, name, recorder)


def say(event: str, **data: object) -> None:
    print(json.dumps({"event": event, **data}), flush=True)


def device(rect: QRect, scale: float) -> list[int]:
    return [round(v * scale) for v in (rect.x(), rect.y(), rect.width(), rect.height())]


class Target(QWidget):
    """Black text on white: what the capture must read back."""

    def __init__(self, window) -> None:
        flags = Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
        super().__init__(None, flags)
        self.app_window = window  # for where its Capture button is (None: no app)
        self.setGeometry(TARGET_GEOMETRY)
        self.setWindowTitle(TARGET_TITLE)
        self.on_painted = self.report

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.GlobalColor.white)
        font = QFont("DejaVu Sans")
        font.setPixelSize(30)
        painter.setFont(font)
        painter.setPen(Qt.GlobalColor.black)
        painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, TARGET_TEXT)
        painter.end()
        if self.on_painted is not None:
            QTimer.singleShot(0, self.on_painted)  # after the paint is flushed to the screen
            self.on_painted = None

    def report(self) -> None:
        scale = self.devicePixelRatioF()
        if self.app_window is None:
            say("ready", target=device(self.geometry(), scale), scale=scale)
            return
        button = self.app_window.page.capture_button
        centre = button.mapToGlobal(button.rect().center())
        say(
            "ready",
            target=device(self.geometry(), scale),
            scale=scale,
            capture_button=[round(centre.x() * scale), round(centre.y() * scale)],
        )


class Driver(QObject):
    def __init__(self, window, target: Target) -> None:
        super().__init__()
        self.window = window
        self.target = target
        flow = window.capturing
        flow.overlay_shown.connect(lambda: say("overlay"))
        flow.copied.connect(self.on_copied)
        flow.attached.connect(self.on_attached)
        flow.cancelled.connect(lambda: say("cancelled", clipboard=self.clipboard()))
        flow.failed.connect(lambda text: say("failed", text=text))
        window.ocr.worker.ready.connect(lambda: say("ocr-ready"))
        self.notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read, self)
        self.notifier.activated.connect(self.on_command)

    @staticmethod
    def clipboard() -> str:
        return QGuiApplication.clipboard().text()

    def crop(self) -> dict[str, object]:
        capture = self.window.capturing.last_capture
        area = capture.area
        return {
            "crop": [capture.image.width(), capture.image.height()],
            "area": [area.x(), area.y(), area.width(), area.height()],
        }

    def on_copied(self, text: str) -> None:
        toast = self.window.capturing.toast
        undo = toast.buttons["Undo"]
        centre = undo.mapToGlobal(undo.rect().center())
        scale = undo.devicePixelRatioF()
        say(
            "copied",
            text=text,
            clipboard=self.clipboard(),
            note=toast.label.text(),
            window_visible=self.window.isVisible(),
            undo=[round(centre.x() * scale), round(centre.y() * scale)],
            **self.crop(),
        )

    def on_attached(self, ref) -> None:
        composer = self.window.composer
        say(
            "attached",
            size=list(ref.size),
            attachments=len(composer.attachments()),
            window_visible=self.window.isVisible(),
            **self.crop(),
        )

    def on_command(self) -> None:
        line = sys.stdin.readline()
        command, _, argument = line.strip().partition(" ")
        if not line or command == "quit":
            self.notifier.setEnabled(False)
            say("bye", gui_thread_writes=gui_thread_writes)
            self.window.close()
            QGuiApplication.quit()
        elif command == "capture":
            self.window.capturing.start(argument.strip("-"), hide_window=False)
        elif command == "clipboard":
            say("clipboard", text=self.clipboard())
        elif command == "set-clipboard":
            QGuiApplication.clipboard().setText(argument)
            say("clipboard", text=self.clipboard())


def target_only() -> int:
    """Only the window with the text (for `desklens capture` without the app)."""
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])
    target = Target(None)
    target.show()
    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(app.quit)  # any line, or stdin closed
    return app.exec()


def main() -> int:
    if sys.argv[1] == "--target-only":
        return target_only()
    record_writes()
    app, window = create_app(data_dir=Path(sys.argv[1]))
    target = Target(window)
    target.show()
    driver = Driver(window, target)
    code = app.exec()
    del driver, target
    return code


if __name__ == "__main__":
    sys.exit(main())
