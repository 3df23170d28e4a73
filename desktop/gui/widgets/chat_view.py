"""The scrolling column of messages, with the empty-state hint when there are none. It renders
the session's `Transcript`, one widget per entry, plus the bubble of an answer still streaming
(its entry is added when it ends); the widgets name their entries to the flows by id."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.core.chat import Answer
from desktop.core.conversation.transcript import Entry, Transcript
from desktop.core.history import Role
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import Thumbnail, text_label
from desktop.gui.widgets.evidence_links import link_evidence
from desktop.gui.widgets.history_view import entry_widget
from desktop.gui.widgets.icons import app_icon
from desktop.gui.widgets.messages import (
    AssistantMessage,
    ChatActions,
    ErrorMessage,
    MessageWidget,
    NoteMessage,
    UserMessage,
)
from desktop.gui.widgets.outlines import Corners

if TYPE_CHECKING:  # the OCR package is not loaded at start
    from collections.abc import Collection

    from desktop.core.evidence import Evidence

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
        self.setAccessibleName("Chat")  # it takes the focus, to scroll with the keys
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
        self.transcript = Transcript()  # the session's, once show_transcript() is called
        self._actions = ChatActions(self)
        self._streaming: AssistantMessage | None = None  # the answer being written
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
        if message is self._streaming:
            self._streaming = None
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
        self._streaming = None
        self.empty_state.show()
        self.contents_changed.emit()

    # --- the session's transcript, rendered -------------------------------------------------

    def show_transcript(self, transcript: Transcript, actions: ChatActions) -> None:
        """Shows `transcript` (a chat just opened, or a new one) in place of what was shown."""
        self.clear()
        self.transcript = transcript
        self._actions = actions
        for entry in transcript.entries:
            self.show_entry(entry)

    def show_entry(self, entry: Entry) -> None:
        """Shows an entry just added to the transcript, at the end."""
        widget = entry_widget(entry, self.transcript, self._actions)
        if widget is not None:
            self.add(widget)

    def widget_for(self, entry_id: int) -> QWidget | None:
        found = [m for m in self._messages if getattr(m, "entry_id", None) == entry_id]
        return found[0] if found else None

    def remove_entries(self, entry_ids: Collection[int]) -> None:
        """Takes the widgets of the dropped entries out of the view, and every widget of no
        entry after the first (a streamed bubble, a note). An extraction that came while an
        answer streamed is shown after the answer but stored before it: it stays."""
        ids = set(entry_ids)
        dropped = [i for i, m in enumerate(self._messages) if getattr(m, "entry_id", None) in ids]
        if dropped:
            for message in self._messages[dropped[0] :]:
                if getattr(message, "entry_id", None) in ids | {None}:
                    self.remove(message)

    def offer_unanswered(self, entry_id: int, text: str) -> None:
        """A card under the question `entry_id`, which nothing answered: its Retry and
        Regenerate ask that question again (the card names it)."""
        card = ErrorMessage(text, self._actions, retry=True, regenerate=True)
        card.entry_id = entry_id
        self.add(card)

    def drop_unanswered(self, entry_id: int) -> None:
        """Takes the no-answer card of the question `entry_id` out of the view (only the card:
        an extraction shown after it meanwhile stays)."""
        for message in list(self._messages):
            if isinstance(message, ErrorMessage) and message.entry_id == entry_id:
                self.remove(message)

    def show_prompt(self, entry: Entry) -> None:
        """A question's composed prompt is known now (its answer came back)."""
        widget = self.widget_for(entry.id)
        if isinstance(widget, UserMessage):
            widget.set_context(entry.prompt, entry.asked.label)

    def show_evidence(self, question_id: int, answer_id: int, evidence: Evidence) -> None:
        """Outlines the lines the answer quotes on its question's thumbnails, names on the
        answer's card its figures that are not on the images, and makes its words that the
        images hold links to them (widgets/evidence_links.py)."""
        question, answer = self.widget_for(question_id), self.widget_for(answer_id)
        images: list[ImageRef] = []
        regions: list[tuple[Corners, ...]] = []
        if isinstance(question, UserMessage):
            images = question.images
            regions = [() for _image in images]
            for thumb in question.findChildren(Thumbnail):
                index = next((i for i, r in enumerate(question.images) if r is thumb.ref), -1)
                thumb.show_evidence(tuple(e.box for e in evidence.lines if e.image == index))
                if index >= 0:
                    regions[index] = thumb.marks().regions
        if isinstance(answer, AssistantMessage):
            link_evidence(answer.view, answer.text(), evidence, images, regions, self._actions)
            for old in answer.findChildren(QLabel):
                if old.accessibleName() == EVIDENCE_NOTE:
                    answer.body.removeWidget(old)
                    old.deleteLater()
            place = answer.body.indexOf(answer.view) + 1
            for offset, (text, name) in enumerate(evidence_notes(evidence)):
                note = text_label(text, name)
                note.setAccessibleName(EVIDENCE_NOTE)
                answer.body.insertWidget(place + offset, note)

    # --- the answer being written (not in the transcript until it ends) --------------------

    def begin_answer(self, waiting: str) -> None:
        self._streaming = AssistantMessage(waiting=waiting, actions=self._actions)
        self.add(self._streaming)

    def answering(self) -> bool:
        return self._streaming is not None

    def set_waiting(self, text: str) -> None:
        if self._streaming is not None:
            self._streaming.set_waiting(text)

    def stream(self, chunk: str) -> None:
        if self._streaming is not None:
            self._streaming.append(chunk)

    def end_answer(self, entry: Entry, answer: Answer) -> None:
        """The answer ended: an answer's bubble becomes its entry's; an error's goes, and
        the error entry is shown in its place."""
        widget, self._streaming = self._streaming, None
        if widget is not None and entry.role is Role.ASSISTANT:
            widget.finish(answer)
            widget.entry_id = entry.id
            return
        if widget is not None:
            self.remove(widget)
        self.show_entry(entry)

    def last_answer(self) -> AssistantMessage | None:
        """The last answer's bubble, as shown."""
        answers = [m for m in self._messages if isinstance(m, AssistantMessage)]
        return answers[-1] if answers else None

    def images(self) -> list[ImageRef]:
        """Every picture the chat's questions show, once each."""
        return [cast("ImageRef", image) for image in self.transcript.images()]

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


EVIDENCE_NOTE = "Where the answer came from"


def evidence_notes(evidence: Evidence) -> list[tuple[str, str]]:
    """What the answer's card says of its evidence: (text, the label's style name)."""
    notes = []
    if evidence.not_found:
        figures = ", ".join(evidence.not_found)
        notes.append((f"Not found on the image: {figures} (check these figures).", "errorText"))
    if evidence.lines:
        count = len(evidence.lines)
        lines = "line" if count == 1 else "lines"
        notes.append(
            (
                f"{count} {lines} of the image hold this answer's words (outlined in green).",
                "messageMeta",
            )
        )
    return notes
