"""The composer's question box: Enter sends, Shift+Enter breaks the line, pasted or dragged
images go to the composer; it grows with its text up to a few lines."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QKeyEvent
from PySide6.QtWidgets import QFrame, QPlainTextEdit

from desktop.gui.workers.intake import can_attach

MAX_EDITOR_LINES = 8
PLACEHOLDER = "Ask about your screenshots…  (Enter sends, Shift+Enter adds a line)"


class ComposerEdit(QPlainTextEdit):
    """Enter sends, Shift+Enter breaks the line; pasted or dragged images go to the owner."""

    submitted = Signal()
    mime_pasted = Signal(QMimeData)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("composerEdit")
        self.setAccessibleName("Question")
        self.setPlaceholderText(PLACEHOLDER)
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self._fit_height()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        is_enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        plain = not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if is_enter and plain:
            self.submitted.emit()
            return
        if is_enter:  # Shift+Enter: QPlainTextEdit would insert a line separator (U+2028)
            self.insertPlainText("\n")
            return
        super().keyPressEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return can_attach(source) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if can_attach(source):
            self.mime_pasted.emit(source)
        else:
            super().insertFromMimeData(source)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if can_attach(event.mimeData()):
            event.ignore()  # the window shows its drop overlay and takes the drop
        else:
            super().dragEnterEvent(event)

    def _fit_height(self, *_args) -> None:
        line = self.fontMetrics().lineSpacing()
        lines = max(1, min(MAX_EDITOR_LINES, int(self.document().size().height())))
        margins = int(self.document().documentMargin() * 2) + 4
        self.setFixedHeight(max(2, lines) * line + margins)
