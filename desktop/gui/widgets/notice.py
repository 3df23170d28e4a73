"""A one-line banner above the composer for things the user should read but not answer:
refused files, a chat deleted (with Undo), a history problem."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QWidget

from desktop.core.terminal_text import terminal_text
from desktop.gui.widgets.basics import flat_button, text_label

INFO_MS = 8000
ERROR_MS = 15000


class Notice(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice")
        self.setAccessibleName("Notice")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 8, 6, 8)
        self.label = text_label()
        layout.addWidget(self.label, 1)
        self.action_button = flat_button("")
        self.action_button.clicked.connect(self._run_action)
        layout.addWidget(self.action_button)
        close = flat_button("×", "Dismiss", "Dismiss notice")
        close.clicked.connect(self.dismiss)
        layout.addWidget(close)
        self._action: Callable[[], None] | None = None
        self._on_dismiss: Callable[[], None] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self.hide()

    def text(self) -> str:
        parent = self.parentWidget()
        return self.label.text() if parent is not None and self.isVisibleTo(parent) else ""

    def show_message(
        self,
        text: str,
        *,
        error: bool = False,
        action: tuple[str, Callable[[], None]] | None = None,
        on_dismiss: Callable[[], None] | None = None,
        persistent: bool = False,
    ) -> None:
        """`persistent` notices stay until dismissed (where a damaged history went)."""
        self.dismiss()
        self.label.setText(terminal_text(text))  # a server's words: bidi overrides shown
        self.setProperty("kind", "error" if error else "info")
        self.style().unpolish(self)
        self.style().polish(self)
        self._action = action[1] if action else None
        self.action_button.setText(action[0] if action else "")
        self.action_button.setAccessibleName(action[0] if action else "")
        self.action_button.setVisible(action is not None)
        self._on_dismiss = on_dismiss
        if not persistent:
            self._timer.start(ERROR_MS if error else INFO_MS)
        self.show()

    def dismiss(self) -> None:
        self._timer.stop()
        callback, self._on_dismiss = self._on_dismiss, None
        self.hide()
        if callback is not None:
            callback()

    def _run_action(self) -> None:
        action, self._action = self._action, None
        self._on_dismiss = None  # the action replaces what dismissing would have done
        self.dismiss()
        if action is not None:
            action()
