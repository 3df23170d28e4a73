"""The chat page: a header (title, Capture, Extract text from all, Settings), the first-run
panel, the chat column, the notice bar and the composer, each as wide as the chat column."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.chat_view import COLUMN_MAX_WIDTH, ChatView
from desktop.gui.composer import Composer
from desktop.gui.first_run import FirstRunPanel
from desktop.gui.notice import Notice
from desktop.gui.widgets import push_button


def _centred(widget: QWidget, margins: tuple[int, int, int, int]) -> QWidget:
    """`widget` in a row that keeps it as wide as the chat column, centred."""
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(*margins)
    widget.setMaximumWidth(COLUMN_MAX_WIDTH)
    row.addStretch(1)
    row.addWidget(widget, 100)
    row.addStretch(1)
    return holder


class ChatPage(QWidget):
    def __init__(self, models_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPage")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)

        header = QWidget()
        header_row = QHBoxLayout(header)
        header_row.setContentsMargins(20, 10, 16, 6)
        self.title_label = QLabel("New chat")
        self.title_label.setObjectName("sidebarTitle")
        # In a narrow window the title gives way (its full text is the window's title); the
        # buttons keep their labels.
        self.title_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        header_row.addWidget(self.title_label, 1)
        self.extract_all_button = push_button(
            "Extract text from all", tooltip="Read the text of every attached image (Ctrl+E)"
        )
        self.settings_button = push_button("Settings", tooltip="Settings (Ctrl+,)")
        self.capture_button = push_button(
            "Capture", tooltip="Capture a screen region: its text, or a question (Ctrl+Shift+S)"
        )
        header_row.addWidget(self.capture_button)
        header_row.addWidget(self.extract_all_button)
        header_row.addWidget(self.settings_button)
        column.addWidget(header)

        self.first_run = FirstRunPanel(models_dir)
        # Scrolls rather than squeezes its rows together when the window is short.
        self.first_run_holder = QScrollArea()
        self.first_run_holder.setObjectName("chatScroll")
        self.first_run_holder.setFrameShape(QFrame.Shape.NoFrame)
        self.first_run_holder.setWidgetResizable(True)
        self.first_run_holder.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.first_run_holder.setWidget(_centred(self.first_run, (20, 6, 20, 6)))
        self.first_run_holder.hide()
        column.addWidget(self.first_run_holder)
        self.chat = ChatView()
        column.addWidget(self.chat, 1)
        self.notice = Notice()
        column.addWidget(_centred(self.notice, (20, 0, 20, 6)))
        self.composer = Composer()
        column.addWidget(_centred(self.composer, (20, 0, 20, 14)))
