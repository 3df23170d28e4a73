"""The chat page: a header (the chats' toggle, title, Capture, Extract text from all,
Settings), the first-run panel, the chat column, the notice bar and the composer, each as wide
as the chat column.

In a narrow page the header's long labels give way to short ones (their tooltips keep the
whole name) and then the title goes; a label is never cut."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.panels.first_run import FirstRunPanel
from desktop.gui.widgets.basics import ElidedLabel, push_button
from desktop.gui.widgets.chat_view import COLUMN_MAX_WIDTH, ChatView
from desktop.gui.widgets.composer import Composer
from desktop.gui.widgets.legibility_bar import LegibilityBar
from desktop.gui.widgets.notice import Notice

# The header's buttons with a shorter label for a narrow page: (full, short).
SHORT_LABELS = {"Extract text from all": "Extract all"}
TITLE_ROOM = 120  # the title's share of the header before the labels shorten


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
    sidebar_toggle_requested = Signal()

    def __init__(self, models_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatPage")
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)

        self.header = header = QWidget()
        header_row = QHBoxLayout(header)
        header_row.setContentsMargins(12, 10, 16, 6)
        self.sidebar_button = QToolButton()
        self.sidebar_button.setProperty("role", "flat")
        self.sidebar_button.setIconSize(QSize(20, 20))
        self.sidebar_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.sidebar_button.clicked.connect(self.sidebar_toggle_requested)
        self.set_sidebar_shown(True)
        header_row.addWidget(self.sidebar_button)
        # In a narrow window the title gives way (cut with "…", whole in its tooltip and the
        # window's title); the buttons keep their labels.
        self.title_label = ElidedLabel("New chat")
        self.title_label.setObjectName("sidebarTitle")
        header_row.addWidget(self.title_label, 1)
        self.extract_all_button = push_button(
            "Extract text from all",
            tooltip="Extract text from all: the fast OCR reads every attached image (Ctrl+E)",
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
        self.first_run_holder.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # its rows take it
        self.first_run_holder.setWidget(_centred(self.first_run, (20, 6, 20, 6)))
        self.first_run_holder.hide()
        column.addWidget(self.first_run_holder, 1)
        self.chat = ChatView()
        self.chat.contents_changed.connect(self._place_chat)
        column.addWidget(self.chat, 1)
        self.notice = Notice()
        column.addWidget(_centred(self.notice, (20, 0, 20, 6)))
        self.legibility_bar = LegibilityBar()  # text too small for the model: the remedies
        column.addWidget(_centred(self.legibility_bar, (20, 0, 20, 6)))
        self.composer = Composer()
        column.addWidget(_centred(self.composer, (20, 0, 20, 14)))
        self._shown = False

    def showEvent(self, event: QShowEvent) -> None:
        """The window opens with the focus in the question box (it went to the first button,
        "New chat", so typing went nowhere)."""
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self.composer.focus_editor()

    def show_first_run(self, shown: bool) -> None:
        """The model setup card; while it shows, an empty chat gives it the height (the
        chat's own empty-state hint would be squeezed under it)."""
        self.first_run_holder.setVisible(shown)
        self._place_chat()

    def set_sidebar_shown(self, shown: bool) -> None:
        button = self.sidebar_button
        button.setToolTip("Hide the chats (Ctrl+B)" if shown else "Show the chats (Ctrl+B)")
        button.setAccessibleName("Hide the chats" if shown else "Show the chats")
        button.setCheckable(True)
        button.setChecked(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_header()

    def fit_header(self) -> None:
        """Full labels when they fit beside the title, else the short ones; the title goes
        when even those need its room."""
        layout = self.header.layout()
        if layout is None:
            return
        buttons = self.header.findChildren(QPushButton)
        for full, short in SHORT_LABELS.items():
            for button in buttons:
                if button.text() == short:
                    button.setText(full)
        room = self.width() - TITLE_ROOM
        if layout.minimumSize().width() > room:
            for button in buttons:
                button.setText(SHORT_LABELS.get(button.text(), button.text()))
        self.title_label.setVisible(layout.minimumSize().width() <= room)

    def _place_chat(self) -> None:
        self.chat.setVisible(bool(self.chat.messages()) or self.first_run_holder.isHidden())
