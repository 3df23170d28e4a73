"""Export the open chat: Markdown with an images folder, one self-contained HTML file, or
"Copy conversation" as Markdown. The documents are written on the storage thread by the
Qt-free exporter (desktop/core/history/export.py), which `desklens history export` uses too.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QBoxLayout, QFileDialog, QMenu, QToolButton, QWidget

from desktop.core.history import HistoryError
from desktop.core.history.export import (
    ExportedChat,
    clipboard_markdown,
    safe_file_name,
    write_document,
)
from desktop.gui.flows.asking import ChatParts
from desktop.gui.flows.save_as import SAVE_FOLDER

FILTERS = {"md": "Markdown, images in a folder beside it (*.md)", "html": "Web page (*.html)"}


class ExportFlow(QObject):
    """The header's Export menu."""

    def __init__(self, parts: ChatParts, beside: QWidget, window: QWidget) -> None:
        super().__init__(window)
        self._parts = parts
        self._window = window
        self.button = QToolButton()
        self.button.setText("Export")
        self.button.setToolTip("Save or copy this chat")
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.button.setProperty("role", "flat")
        menu = QMenu(self.button)
        menu.addAction("Save as Markdown…", lambda: self.save("md"))
        menu.addAction("Save as HTML…", lambda: self.save("html"))
        menu.addAction("Copy conversation", self.copy)
        self.button.setMenu(menu)
        header = beside.parentWidget()
        row = header.layout() if header is not None else None
        if not isinstance(row, QBoxLayout):
            raise TypeError("the Export button goes into a box layout beside Settings")
        row.insertWidget(row.indexOf(beside), self.button)
        parts.chat.contents_changed.connect(self._update)
        self._update()

    def save(self, fmt: str, path: Path | None = None) -> None:
        """Asks where (unless `path` is given) and writes the document on the storage thread."""
        session = self._parts.session
        chat_id, title = session.conversation_id, session.title
        if chat_id is None:
            return
        if path is None:
            start = SAVE_FOLDER.start(f"{safe_file_name(title)}.{fmt}")
            name, _chosen = QFileDialog.getSaveFileName(
                self._window, "Export chat", start, FILTERS[fmt]
            )
            if not name:
                return
            SAVE_FOLDER.remember(Path(name))
            path = Path(name) if Path(name).suffix else Path(f"{name}.{fmt}")
        store = session.store
        session.storage.submit(
            lambda: write_document(title, store.messages(chat_id), path, fmt),
            on_done=self._saved,
        )

    @Slot()
    def copy(self) -> None:
        session = self._parts.session
        if session.conversation_id is None:
            return
        try:
            messages = session.store.messages(session.conversation_id)  # a read: GUI thread
        except HistoryError as exc:
            self._parts.notice.show_message(str(exc), error=True)
            return
        QGuiApplication.clipboard().setText(clipboard_markdown(session.title, messages))
        self._parts.status.showMessage("Copied the conversation as Markdown.", 3000)

    def _saved(self, exported: object) -> None:
        assert isinstance(exported, ExportedChat)
        self._parts.status.showMessage(
            f"Saved {exported.path.name} ({exported.messages} messages, {exported.images} images).",
            5000,
        )

    def _update(self) -> None:
        self.button.setEnabled(bool(self._parts.session.transcript.entries))
