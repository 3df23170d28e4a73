"""Regenerate an answer, edit a question and send it again (Up in an empty composer edits
the last one). The view, the store and the engine's state drop the later turns together:
`AskFlow` removes them from the view and sends `StoredChat.drops` (their ids), and the engine
worker deletes them from the store and replays the kept turns (their KV prefix is reused).
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QEvent, QObject, Qt, Slot
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLabel, QWidget

from desktop.core.conversation.transcript import Entry, Transcript
from desktop.core.history import Role
from desktop.core.history.records import clean_title, title_from
from desktop.gui.flows.asking import AskFlow, ChatParts
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import flat_button
from desktop.gui.widgets.region_picker import regions_by_image

UNANSWERED_TEXT = (
    "No answer: DeskLens was closed or stopped before it answered this question. Nothing you "
    "typed is lost: ask it again."
)
EDITING_TEXT = "Editing your question: Send asks it again in its place (later turns go)."


class EditBar(QWidget):
    """The line above the question box while an edited question waits for Send."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("editBar")
        row = QHBoxLayout(self)
        row.setContentsMargins(2, 0, 2, 0)
        self.label = QLabel(EDITING_TEXT)
        self.label.setObjectName("muted")
        row.addWidget(self.label, 1)
        self.cancel_button = flat_button("Cancel", "Keep the question as it was")
        row.addWidget(self.cancel_button)
        self.hide()


class RewindFlow(QObject):
    def __init__(self, parts: ChatParts, asking: AskFlow, parent: QObject) -> None:
        super().__init__(parent)
        self._parts = parts
        self._asking = asking
        self._first_question = ""  # the first question's text, while it is being edited
        self.bar = EditBar()
        composer = parts.composer
        layout = composer.layout()
        if not isinstance(layout, QBoxLayout):
            raise TypeError("the composer's layout is a box layout")
        layout.insertWidget(0, self.bar)
        self.bar.cancel_button.clicked.connect(self.cancel_edit)
        parts.actions.edit.connect(self.edit)
        parts.actions.regenerate.connect(self.regenerate)
        composer.send_requested.connect(self._after_send)  # runs after AskFlow's slot
        parts.session.opened.connect(lambda _chat: self.cancel_edit())
        composer.editor.installEventFilter(self)

    @Slot(int)
    def regenerate(self, entry_id: int) -> None:
        self._asking.regenerate(entry_id)

    def offer_unanswered(self) -> None:
        """Under a chat's last question that has no answer (the app was closed, killed or
        crashed while it answered), Retry and Regenerate; not while it is being answered."""
        parts = self._parts
        question = unanswered(parts.session.transcript)
        running = self._asking.request
        if question is None or question.message_id is None:
            return
        answering = running.chat if running is not None else None
        if answering is not None and answering.id == parts.session.conversation_id:
            return  # being answered now
        parts.chat.offer_unanswered(question.id, UNANSWERED_TEXT)

    @Slot(int)
    def edit(self, entry_id: int) -> None:
        """Puts the question `entry_id` (text and images) in the composer; Send replaces it."""
        composer = self._parts.composer
        question = self._parts.session.transcript.get(entry_id)
        if question is None:
            return
        if composer.generating:
            self._parts.notice.show_message("Wait for the current answer, or stop it (Esc).")
            return
        composer.clear_images()
        refs = [cast("ImageRef", image) for image in question.images]
        composer.add_images(refs)
        for ref, boxes in regions_by_image(refs, question.asked.regions):
            composer.set_regions(ref, boxes)  # its boxes, to keep or change
        composer.editor.setPlainText(question.text)
        composer.editor.moveCursor(composer.editor.textCursor().MoveOperation.End)
        composer.focus_editor()
        self._asking.editing = entry_id
        questions = self._parts.session.transcript.questions()
        self._first_question = question.text if questions[0].id == entry_id else ""
        self.bar.show()

    def edit_last(self) -> bool:
        questions = self._parts.session.transcript.questions()
        if not questions:
            return False
        self.edit(questions[-1].id)
        return True

    @Slot()
    def cancel_edit(self) -> None:
        if self._asking.editing is None:
            return
        self._end_edit()
        self._parts.composer.editor.clear()
        self._parts.composer.clear_images()

    @Slot(str, list)
    def _after_send(self, _question: str, _images: list) -> None:
        if self._asking.editing is None:  # sent (else kept: the drop was not confirmed)
            self.bar.hide()
            self._retitle(_question)

    def _retitle(self, question: str) -> None:
        """An edited first question renames the chat it titled (a title the user gave stays)."""
        first, self._first_question = self._first_question, ""
        session = self._parts.session
        chat_id = session.conversation_id
        if first and chat_id is not None and session.title == clean_title(title_from(first)):
            session.rename(chat_id, title_from(question))

    def _end_edit(self) -> None:
        self._asking.editing = None
        self._first_question = ""
        self.bar.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Up in an empty question box edits the last question, as in a terminal."""
        composer = self._parts.composer
        if (
            event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Up
            and not composer.editor.toPlainText()
            and not composer.attachments()
        ):
            return self.edit_last()
        return super().eventFilter(watched, event)


def unanswered(transcript: Transcript) -> Entry | None:
    """The last entry, when it is a question (nothing answered it, nothing followed)."""
    entries = transcript.entries
    return entries[-1] if entries and entries[-1].role is Role.USER else None
