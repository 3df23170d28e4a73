"""The scrolling column of messages, with the empty-state hint when there are none."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.core.refine import ocr_source_texts
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.icons import app_icon
from desktop.gui.widgets.messages import (
    AssistantMessage,
    MessageWidget,
    NoteMessage,
    OcrMessage,
    UserMessage,
)

COLUMN_MAX_WIDTH = 880
EMPTY_TITLE = "Drop a screenshot here…"
EMPTY_HINT = (
    "…or paste one with Ctrl+V, or attach files with the paperclip.\n"
    "Ask a question about it, or click Extract text to copy its text."
)


class EmptyState(QWidget):
    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.addStretch(2)
        icon = QLabel()
        icon.setPixmap(app_icon().pixmap(72, 72))
        icon.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(icon)
        layout.addSpacing(12)
        title = QLabel(EMPTY_TITLE)
        title.setObjectName("emptyTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(title)
        hint = QLabel(EMPTY_HINT)
        hint.setObjectName("emptyHint")
        hint.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        hint.setWordWrap(True)
        layout.addWidget(hint)
        layout.addStretch(3)


class ChatView(QScrollArea):
    contents_changed = Signal()  # a message was added or removed, or the chat was cleared

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatScroll")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAcceptDrops(False)  # drops go to the window
        outer = QWidget()
        outer.setObjectName("chatColumn")
        centring = QHBoxLayout(outer)
        centring.setContentsMargins(20, 16, 20, 16)
        self._column = QWidget()
        self._column.setObjectName("chatColumn")
        self._column.setMaximumWidth(COLUMN_MAX_WIDTH)
        centring.addStretch(1)
        centring.addWidget(self._column, 100)
        centring.addStretch(1)
        self._layout = QVBoxLayout(self._column)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(14)
        self.empty_state = EmptyState()
        self._layout.addWidget(self.empty_state, 10)  # takes the height while alone
        self._layout.addStretch(1)  # keeps messages at the top
        self.setWidget(outer)
        self._messages: list[QWidget] = []
        self._follow = True  # keep the newest text in view unless the user scrolled up
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._on_range_changed)
        bar.valueChanged.connect(self._on_scrolled)

    def messages(self) -> list[QWidget]:
        return list(self._messages)

    def add(self, message: MessageWidget | NoteMessage) -> None:
        self.empty_state.hide()
        self._layout.insertWidget(self._layout.count() - 1, message)
        self._messages.append(message)
        self.scroll_to_end()
        self.contents_changed.emit()

    def remove(self, message: QWidget) -> None:
        if message in self._messages:
            self._messages.remove(message)
            self._layout.removeWidget(message)
            message.deleteLater()
        self.empty_state.setVisible(not self._messages)
        self.contents_changed.emit()

    def clear(self) -> None:
        for message in self._messages:
            self._layout.removeWidget(message)
            message.deleteLater()
        self._messages.clear()
        self.empty_state.show()
        self.contents_changed.emit()

    def images(self) -> list[ImageRef]:
        """Every picture the chat's questions show, once each."""
        seen: dict[str, ImageRef] = {}
        for message in self._messages:
            if isinstance(message, UserMessage):
                for ref in message.images:
                    seen.setdefault(ref.digest, ref)
        return list(seen.values())

    def known_text(self, refs: list[ImageRef]) -> list[str]:
        """The fast-OCR text the chat already shows for these images (Extract text was
        clicked): the answer often copies it, so the model drafts from it."""
        digests = {ref.digest for ref in refs}
        texts: dict[str, None] = {}  # ordered and without repeats
        for message in self._messages:
            if isinstance(message, OcrMessage) and message.image.digest in digests:
                result = message.result
                texts.update(dict.fromkeys(ocr_source_texts(result.text, result.markdown)))
        return list(texts)

    def shows_answers(self) -> bool:
        """The chat has answered turns (a chat of extracted text alone has none)."""
        return any(isinstance(m, AssistantMessage) for m in self._messages)

    def last_answer(self) -> AssistantMessage | None:
        answers = [m for m in self._messages if isinstance(m, AssistantMessage)]
        return answers[-1] if answers else None

    def scroll_to_end(self) -> None:
        self._follow = True
        QTimer.singleShot(0, self, self._jump_to_end)  # once the new widget is laid out

    def _jump_to_end(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_range_changed(self, _low: int, high: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(high)

    def _on_scrolled(self, value: int) -> None:
        self._follow = value >= self.verticalScrollBar().maximum() - 24
