"""Shared helpers for the GUI tests (their fixtures are in tests/gui/conftest.py): synthetic
drops, images with real text, and a "slow model" hook that holds the answer after its first
token."""

from __future__ import annotations

import threading
from pathlib import Path

from PIL import Image

from desktop.core.ocr.rendered_pages import render_lines

SIGNAL_TIMEOUT_MS = 120_000  # generous: two shared CPU cores; tests wait for events, never sleep


def text_image(text: str, size: tuple[int, int] = (720, 140)) -> Image.Image:
    """Black text on white in a TrueType font, large enough for the fast OCR to read."""
    width, height = size
    return render_lines([text], size=44, width=width, height=height, top=40, ink=(0, 0, 0))


def save_png(image: Image.Image, path: Path) -> Path:
    image.save(path)
    return path


def drag_enter(widget, mime):
    """Sends a drag-enter to `widget`; returns the event (accepted or not)."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QDragEnterEvent
    from PySide6.QtWidgets import QApplication

    centre = QPoint(widget.width() // 2, widget.height() // 2)  # Qt's signature (6.11 needs it)
    event = QDragEnterEvent(
        centre, Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    QApplication.sendEvent(widget, event)
    return event


def drop_on(widget, mime) -> None:
    """Delivers a drag-enter and a drop, as the window system would, to `widget`."""
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtGui import QDropEvent
    from PySide6.QtWidgets import QApplication

    drag_enter(widget, mime)
    drop = QDropEvent(
        QPointF(widget.width() / 2, widget.height() / 2), Qt.DropAction.CopyAction, mime,
        Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    QApplication.sendEvent(widget, drop)


def file_mime(*paths: Path):
    from PySide6.QtCore import QMimeData, QUrl

    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def hold_after_first_token(window) -> threading.Event:
    """Makes the running answer wait inside its first token until it is stopped, like a
    slow model would. Runs in the worker thread (direct connection), so the GUI thread stays
    free to show the token and to press Stop. Returns an event set once it is holding."""
    from PySide6.QtCore import Qt

    holding = threading.Event()

    def hold(_chunk: str) -> None:
        request = window.asking.request
        if request is not None and not holding.is_set():
            holding.set()
            [cancel] = [event for sent, event in window.engine._pending if sent is request]
            cancel.wait(SIGNAL_TIMEOUT_MS / 1000)

    window.engine.worker.token.connect(hold, Qt.ConnectionType.DirectConnection)
    return holding


def send(qtbot, window, question: str, images=()) -> object:
    """Types a question, presses Enter and returns the worker's AskResult."""
    from PySide6.QtCore import Qt

    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    window.composer.add_images([ImageRef.of(load_image(image)) for image in images])
    window.composer.editor.setPlainText(question)
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    return blocker.args[0]


def shown_message(status) -> str:
    """The status bar's message as the user sees it: "" unless it has room to be drawn whole.
    QStatusBar draws it between its left edge and its first visible permanent widget (the
    others are hidden while a message shows), so a widget stretched there leaves it none."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QWidget

    QApplication.processEvents()  # the layout after the message hid the normal widgets
    text = status.currentMessage()
    children = status.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
    right = min([child.x() for child in children if child.isVisible()] + [status.width()])
    room = right - 2 - 6  # Qt's margins around the message
    return text if text and status.fontMetrics().horizontalAdvance(text) <= room else ""
