"""Drag-and-drop anywhere on the window, with an overlay that says what a drop will do.

Child widgets that do not take drops pass drag events up to the window, where `DropHandler`
(an event filter) catches them; the composer's editor passes up files and images explicitly.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QDropEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.core.images import IMAGE_EXTENSIONS, PDF_EXTENSION
from desktop.gui.theme import current_theme
from desktop.gui.workers.intake import IntakeRequest, can_attach, request_from_mime

_DRAG_EVENTS = (
    QEvent.Type.DragEnter,
    QEvent.Type.DragMove,
    QEvent.Type.DragLeave,
    QEvent.Type.Drop,
)


class DropOverlay(QWidget):
    """A translucent sheet over the whole window while a drag hovers it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("dropOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()

    def cover(self) -> None:
        parent = self.parentWidget()
        if parent is not None:
            self.setGeometry(parent.rect())
        self.raise_()
        self.show()

    def paintEvent(self, _event: QPaintEvent) -> None:
        theme = current_theme()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        backdrop = QColor(theme.window)
        backdrop.setAlpha(225)
        painter.fillRect(self.rect(), backdrop)
        frame = QRectF(self.rect()).adjusted(18, 18, -18, -18)
        pen = QPen(QColor(theme.accent), 3, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawRoundedRect(frame, 18, 18)
        title = painter.font()
        title.setPointSizeF(title.pointSizeF() * 1.8)
        title.setBold(True)
        painter.setFont(title)
        painter.setPen(QColor(theme.text))
        middle = frame.center().y()
        painter.drawText(
            QRectF(frame.left(), middle - 50, frame.width(), 50),
            Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignBottom,
            "Drop to attach",
        )
        hint = painter.font()
        hint.setPointSizeF(hint.pointSizeF() / 1.8)
        hint.setBold(False)
        painter.setFont(hint)
        painter.setPen(QColor(theme.muted))
        painter.drawText(
            QRectF(frame.left(), middle + 8, frame.width(), 40),
            Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop,
            "Screenshots, photos, folders of images and PDFs",
        )


class DropHandler(QObject):
    """Event filter for the main window: shows the overlay and emits what was dropped."""

    dropped = Signal(IntakeRequest)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.overlay = DropOverlay(window)
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind not in _DRAG_EVENTS:
            return False
        if kind == QEvent.Type.DragLeave:
            self.overlay.hide()
            return True
        assert isinstance(event, QDropEvent)  # DragEnter and DragMove derive from it
        if not can_attach(event.mimeData()):
            event.ignore()
            return True
        event.acceptProposedAction()
        if kind == QEvent.Type.Drop:
            self.overlay.hide()
            self.dropped.emit(request_from_mime(event.mimeData()))
        elif not self.overlay.isVisible():
            self.overlay.cover()
        return True


FILE_FILTER = "Images and PDFs ({});;All files (*)".format(
    " ".join(f"*{ext}" for ext in sorted(IMAGE_EXTENSIONS | {PDF_EXTENSION}))
)


def choose_files(parent: QWidget) -> IntakeRequest:
    """The attach button's file dialog."""
    names, _ = QFileDialog.getOpenFileNames(parent, "Attach images or PDFs", "", FILE_FILTER)
    return IntakeRequest(paths=[Path(name) for name in names])
