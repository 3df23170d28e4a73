"""Conversation list: new, search, rename in place, delete with Undo.

A deleted conversation disappears at once but is only removed from the store when the owner
calls `purge_pending()` (its Undo offer lapsed, or the app closes), because deleting also
deletes its images for good. The list is read from the store; renames and deletions are
written by the session, on the storage thread.
"""

from __future__ import annotations

import time

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPoint,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QKeyEvent, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from desktop.core.history import ConversationSummary, HistoryError
from desktop.gui.flows.session import ConversationSession
from desktop.gui.theme import current_theme
from desktop.gui.widgets.basics import push_button
from desktop.gui.widgets.icons import line_icon

_ID_ROLE = Qt.ItemDataRole.UserRole
_WHEN_ROLE = Qt.ItemDataRole.UserRole + 1


class ConversationDelegate(QStyledItemDelegate):
    """Title on the left (elided), last activity in muted text on the right."""

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        title, opt.text = opt.text, ""
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        when = str(index.data(_WHEN_ROLE) or "")
        area = opt.rect.adjusted(10, 0, -10, 0)
        metrics = opt.fontMetrics
        when_width = metrics.horizontalAdvance(when) + 8 if when else 0
        painter.save()
        painter.setPen(QColor(current_theme().muted))
        painter.drawText(area, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, when)
        painter.setPen(opt.palette.color(QPalette.ColorRole.Text))
        text = metrics.elidedText(title, Qt.TextElideMode.ElideRight, area.width() - when_width)
        painter.drawText(area, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        painter.restore()


def _when(timestamp: float) -> str:
    today = time.localtime()
    moment = time.localtime(timestamp)
    if moment[:3] == today[:3]:
        return time.strftime("%H:%M", moment)
    return time.strftime("%d %b", moment).lstrip("0")


class Sidebar(QWidget):
    conversation_selected = Signal(object)  # int, or None for a new chat
    deleted = Signal(int, str)  # id, title: hidden, the owner offers Undo
    purged = Signal(int)  # removed from the store for good
    problem = Signal(str)

    def __init__(self, session: ConversationSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setMinimumWidth(200)
        self._session = session
        self._pending_delete: int | None = None

        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 14, 12, 12)
        layout.setSpacing(10)
        header = QHBoxLayout()
        title = QLabel("Chats")
        title.setObjectName("sidebarTitle")
        header.addWidget(title)
        header.addStretch(1)
        self.new_button = push_button("New chat", tooltip="Start a new chat (Ctrl+N)")
        self.new_button.setIconSize(QSize(16, 16))
        self.new_button.clicked.connect(lambda: self.select(None))
        header.addWidget(self.new_button)
        layout.addLayout(header)

        self.search = QLineEdit()
        self.search.setPlaceholderText("Search chats")
        self.search.setAccessibleName("Search chats")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(lambda _text: self.refresh())
        layout.addWidget(self.search)

        self.list = QListWidget()
        self.list.setObjectName("conversationList")
        self.list.setAccessibleName("Chats")
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._show_menu)
        self.list.itemClicked.connect(self._on_clicked)
        self.list.itemActivated.connect(self._on_clicked)
        self.list.itemChanged.connect(self._on_renamed)
        self.list.setUniformItemSizes(True)
        self.list.setItemDelegate(ConversationDelegate(self.list))
        layout.addWidget(self.list, 1)
        self.empty_label = QLabel("No chats yet.")
        self.empty_label.setObjectName("muted")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(self.empty_label)

        self.list.installEventFilter(self)  # F2 renames, Delete deletes the selected chat
        self._current: int | None = None
        self.refresh_icons()

    # --- public --------------------------------------------------------------------------

    @property
    def current_id(self) -> int | None:
        return self._current

    def refresh(self) -> None:
        """Reloads the list from the store, keeping the selection."""
        try:
            summaries = self._session.store.list_conversations(self.search.text() or None)
        except HistoryError as exc:
            self.problem.emit(str(exc))
            summaries = []
        self.list.blockSignals(True)
        self.list.clear()
        for summary in summaries:
            if summary.id == self._pending_delete:
                continue
            self.list.addItem(self._item(summary))
        self._select_row(self._current)
        self.list.blockSignals(False)
        searching = bool(self.search.text())
        self.empty_label.setText("No matching chats." if searching else "No chats yet.")
        self.empty_label.setVisible(self.list.count() == 0)

    def latest_id(self) -> int | None:
        """The chat used last (the list is newest first)."""
        item = self.list.item(0)
        return item.data(_ID_ROLE) if item is not None else None

    def select(self, conversation_id: int | None) -> None:
        self._current = conversation_id
        self._select_row(conversation_id)
        self.conversation_selected.emit(conversation_id)

    def mark_current(self, conversation_id: int | None) -> None:
        """Highlights a conversation without announcing it (the owner just created it)."""
        self._current = conversation_id
        self.refresh()

    def delete_conversation(self, conversation_id: int) -> None:
        """Hides the conversation now and deletes it once Undo is no longer offered."""
        self.purge_pending()  # one Undo at a time
        item = self._item_of(conversation_id)
        title = item.text() if item is not None else "chat"
        self._pending_delete = conversation_id
        if self._current == conversation_id:
            self.select(None)
        self.refresh()
        self.deleted.emit(conversation_id, title)

    def undo_delete(self) -> None:
        self._pending_delete = None
        self.refresh()

    def purge_pending(self) -> None:
        conversation_id, self._pending_delete = self._pending_delete, None
        if conversation_id is None:
            return
        self._session.delete(conversation_id)
        self.purged.emit(conversation_id)

    def refresh_icons(self) -> None:
        self.new_button.setIcon(line_icon("plus", current_theme().text))

    # --- internals -----------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.list and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            item = self.list.currentItem()
            if item is not None and self.list.state() != QListWidget.State.EditingState:
                if event.key() == Qt.Key.Key_F2:
                    self._rename(item)
                    return True
                if (
                    event.matches(QKeySequence.StandardKey.Delete)
                    or event.key() == Qt.Key.Key_Delete
                ):
                    self._delete(item)
                    return True
        return super().eventFilter(watched, event)

    def _item(self, summary: ConversationSummary) -> QListWidgetItem:
        item = QListWidgetItem(summary.title)
        item.setData(_ID_ROLE, summary.id)
        item.setData(_WHEN_ROLE, _when(summary.updated_at))
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        tip = f"{summary.title}\n{_when(summary.updated_at)} · {summary.message_count} messages"
        if summary.preview:
            tip += f"\n{summary.preview}"
        item.setToolTip(tip)
        item.setSizeHint(QSize(0, 36))
        return item

    def _item_of(self, conversation_id: int | None) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            if self.list.item(row).data(_ID_ROLE) == conversation_id:
                return self.list.item(row)
        return None

    def _select_row(self, conversation_id: int | None) -> None:
        item = self._item_of(conversation_id)
        if item is not None:
            self.list.setCurrentItem(item)
        else:
            self.list.clearSelection()
            self.list.setCurrentRow(-1)

    def _on_clicked(self, item: QListWidgetItem) -> None:
        conversation_id = item.data(_ID_ROLE)
        if conversation_id != self._current:
            self.select(conversation_id)

    def _on_renamed(self, item: QListWidgetItem) -> None:
        self._session.rename(item.data(_ID_ROLE), item.text())  # the list follows once saved

    def _rename(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            self.list.editItem(item)

    def _delete(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            self.delete_conversation(item.data(_ID_ROLE))

    def _show_menu(self, position: QPoint) -> None:
        item = self.list.itemAt(position)
        if item is None:
            return
        menu = QMenu(self)
        menu.addAction("Rename", lambda: self._rename(item))
        menu.addAction("Delete", lambda: self._delete(item))
        menu.exec(self.list.viewport().mapToGlobal(position))
        menu.deleteLater()  # a child of the list: it would stay until the window goes
