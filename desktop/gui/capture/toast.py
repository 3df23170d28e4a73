"""A small note in the corner of the screen after "copy the text": the window may be hidden or
behind others, so the notice bar would go unseen. It never takes the keyboard focus."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QPoint, Qt, QTimer
from PySide6.QtGui import QEnterEvent, QGuiApplication, QScreen
from PySide6.QtWidgets import QFrame, QHBoxLayout, QWidget

from desktop.gui.widgets.basics import flat_button, text_label

SHOWN_MS = 20_000  # long enough to read the line and reach Undo or Show (WCAG 2.2.1)
MARGIN = 24
FIRST_LINE_CHARS = 70


def first_line(text: str) -> str:
    """The first non-empty line, shortened to fit the note."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= FIRST_LINE_CHARS else line[: FIRST_LINE_CHARS - 1] + "…"


class CaptureToast(QFrame):
    def __init__(self) -> None:
        flags = (
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.WindowDoesNotAcceptFocus
        )
        super().__init__(None, flags)
        self.setObjectName("notice")
        self.setAccessibleName("Capture result")
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 10, 8, 10)
        self.label = text_label(selectable=False)
        self.label.setWordWrap(False)  # one line: the note grows instead
        row.addWidget(self.label, 1)
        self.buttons: dict[str, QWidget] = {}
        self._actions: dict[str, Callable[[], None]] = {}
        for name in ("Undo", "Show"):
            button = flat_button(name)
            button.clicked.connect(lambda _=False, n=name: self._run(n))
            row.addWidget(button)
            self.buttons[name] = button
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)

    def show_result(
        self,
        text: str,
        screen: QScreen | None,
        *,
        undo: Callable[[], None] | None,
        show: Callable[[], None],
    ) -> None:
        self.label.setText(text)
        self._actions = {"Show": show, **({"Undo": undo} if undo else {})}
        self.buttons["Undo"].setVisible(undo is not None)
        self.adjustSize()
        area = (screen or QGuiApplication.primaryScreen()).availableGeometry()
        self.move(area.bottomRight() - QPoint(self.width() + MARGIN, self.height() + MARGIN))
        self.show()
        self.raise_()
        self._timer.start(SHOWN_MS)

    def enterEvent(self, event: QEnterEvent) -> None:
        """It stays while the pointer is over it (on its way to Undo or Show)."""
        self._timer.stop()
        super().enterEvent(event)

    def leaveEvent(self, event: QEvent) -> None:
        if self.isVisible():
            self._timer.start(SHOWN_MS)
        super().leaveEvent(event)

    def _run(self, name: str) -> None:
        self.hide()
        action = self._actions.get(name)
        if action is not None:
            action()
