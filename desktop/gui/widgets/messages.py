"""The message widgets of a chat: question, streamed answer, extracted text, error, note.

Widgets do not know the app, nor hold the chat: each shows one entry of the session's
`Transcript` (core/conversation/transcript.py) and names it by `entry_id` when a click should
do something, through one `ChatActions` hub that the main window connects once."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.chat import Answer, AnswerStats
from desktop.core.history.ocr_text import OcrText
from desktop.core.reading_summary import answer_summary
from desktop.gui.flows.save_as import table_tsv
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.announce import announce
from desktop.gui.widgets.basics import (
    Thumbnail,
    copy_button,
    copy_to_clipboard,
    flat_button,
    push_button,
    text_label,
)
from desktop.gui.widgets.code_links import link_codes
from desktop.gui.widgets.flow_layout import FlowLayout
from desktop.gui.widgets.markdown_view import MarkdownView
from desktop.gui.widgets.outlines import Marks

CHAT_THUMBNAIL_EDGE = 160
OCR_THUMBNAIL_EDGE = 56
USER_MAX_SHARE = 0.8
RENDER_INTERVAL_MS = 40  # re-render a streaming answer at most 25 times a second
ASSISTANT_NAME = "DeskLens"
NO_TEXT = "The model returned no text for this question."
STOPPED_EMPTY = "Stopped before any text was written."
CUT_SHORT = "Reached the answer length limit"


class ChatActions(QObject):
    """What message widgets ask the window to do."""

    view_image = Signal(ImageRef)
    view_marked = Signal(ImageRef, Marks)  # Marks: its outlines and a line to flash
    extract_text = Signal(list)  # [ImageRef]: fast OCR
    refine = Signal(ImageRef)  # the VLM's Markdown preset
    save_text = Signal(int)  # an extraction's entry id: its text, tables or searchable PDF
    save_table = Signal(int)  # an extraction's entry id: its tables as .xlsx or .csv
    retry = Signal(int)  # an error's entry id: ask its question again
    regenerate = Signal(int)  # an answer's entry id: answer its question again
    edit = Signal(int)  # a question's entry id: put it back in the composer
    told = Signal(str)  # what a click did, for the status bar ("Copied the table…")


class MessageWidget(QWidget):
    """A row holding one bubble: full width on the left (DeskLens), or on the right (the
    user) as wide as its content needs, up to `USER_MAX_SHARE` of the row."""

    def __init__(self, object_name: str, *, right: bool = False) -> None:
        super().__init__()
        self.entry_id: int | None = None  # the transcript entry shown (None: still streaming)
        self._right = right
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(2)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        self.bubble = QFrame()
        self.bubble.setObjectName(object_name)
        self.body = QVBoxLayout(self.bubble)
        self.body.setContentsMargins(16, 12, 16, 10)
        self.body.setSpacing(8)
        if right:
            row.addStretch(1)
        row.addWidget(self.bubble, 0 if right else 1)
        outer.addLayout(row)
        self._outer = outer

    def text(self) -> str:
        return ""

    def _emit(self, intent: SignalInstance) -> None:
        """Names this entry to the window; a bubble still streaming has none yet."""
        if self.entry_id is not None:
            intent.emit(self.entry_id)

    def natural_width(self) -> int:
        """How wide the bubble would like to be (right-aligned bubbles only)."""
        return 0

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._right:
            limit = int(self.width() * USER_MAX_SHARE)
            self.bubble.setFixedWidth(max(120, min(self.natural_width(), limit)))

    def _footer(self, *widgets: QWidget, meta: QLabel | None = None, outside: bool = False) -> None:
        footer = QHBoxLayout()
        footer.setSpacing(2)
        if meta is not None:
            footer.addWidget(meta, 1)
        else:
            footer.addStretch(1)
        for widget in widgets:
            footer.addWidget(widget)
        (self._outer if outside else self.body).addLayout(footer)

    def _thumbnails(self, refs: Sequence[ImageRef], edge: int, actions: ChatActions) -> QWidget:
        holder = QWidget()
        flow = FlowLayout(holder, spacing=6)
        for ref in refs:
            thumb = Thumbnail(ref, edge)
            thumb.clicked.connect(lambda ref, t=thumb: actions.view_marked.emit(ref, t.marks()))
            add_image_actions(thumb, ref, actions)
            flow.addWidget(thumb)
        self.body.addWidget(holder)
        return holder


def add_image_actions(widget: Thumbnail, ref: ImageRef, actions: ChatActions) -> None:
    """The context menu every image in the chat has."""
    for label, emit in (
        ("View", lambda: actions.view_marked.emit(ref, widget.marks())),
        ("Extract text", lambda: actions.extract_text.emit([ref])),
        ("Refine with AI (Markdown)", lambda: actions.refine.emit(ref)),
    ):
        action = QAction(label, widget)
        action.triggered.connect(emit)
        widget.addAction(action)


class UserMessage(MessageWidget):
    def __init__(
        self,
        text: str,
        images: Sequence[ImageRef],
        actions: ChatActions,
        *,
        prompt: str = "",
        context: str = "",
    ) -> None:
        """`text`: the user's own words; `prompt`: what the model read, when more was put
        before them; `context`: what that was, said ("With the extracted text")."""
        super().__init__("userBubble", right=True)
        self.images = list(images)
        self._text = text  # shown and copied
        self._thumbs = (
            self._thumbnails(self.images, CHAT_THUMBNAIL_EDGE, actions) if images else None
        )
        self._label = text_label(self._text) if text else None
        if self._label is not None:
            self.body.addWidget(self._label)
        self._context = text_label("", "messageMeta", selectable=False)
        self.body.addWidget(self._context)
        self.set_context(prompt, context)
        self.bubble.setAccessibleName("Your message")
        buttons: list[QWidget] = []
        if self.images:
            extract = flat_button("Extract text", "Read the text of these images (fast OCR)")
            extract.clicked.connect(lambda: actions.extract_text.emit(list(self.images)))
            buttons.append(extract)
        edit = flat_button("Edit", "Edit this question and send it again")
        edit.clicked.connect(lambda: self._emit(actions.edit))
        self._footer(*buttons, edit, copy_button(self.text, "question"), outside=True)

    def text(self) -> str:
        return self._text

    def set_context(self, prompt: str, context: str) -> None:
        """Says what was put before the words (the prompt itself in its tooltip)."""
        self._context.setText(context)
        self._context.setToolTip(prompt if prompt and prompt != self._text else "")
        self._context.setVisible(bool(context))

    def natural_width(self) -> int:
        margins = self.body.contentsMargins()
        widths = [0]
        if self._label is not None:
            metrics = self._label.fontMetrics()
            widths += [metrics.horizontalAdvance(line) + 4 for line in self._text.splitlines()]
        if self._thumbs is not None:
            thumbs = self._thumbs.findChildren(Thumbnail)
            widths.append(sum(t.sizeHint().width() + 6 for t in thumbs))
        return max(widths) + margins.left() + margins.right()


class AssistantMessage(MessageWidget):
    """Streams: `append()` per chunk, `finish()` with the engine's answer."""

    def __init__(
        self,
        text: str = "",
        *,
        waiting: str = "Thinking…",
        actions: ChatActions | None = None,
        streaming: bool | None = None,
    ) -> None:
        super().__init__("assistantBubble")
        self.bubble.setAccessibleName("Answer")
        self._text = text
        self.stopped = False
        self.streaming = not text if streaming is None else streaming
        header = QHBoxLayout()
        author = QLabel(ASSISTANT_NAME)
        author.setObjectName("messageAuthor")
        header.addWidget(author)
        self.badge = QLabel("stopped")
        self.badge.setObjectName("badge")
        self.badge.setAccessibleName("Answer stopped")
        self.badge.hide()
        header.addWidget(self.badge)
        header.addStretch(1)
        self.body.addLayout(header)
        self.view = MarkdownView()
        self.body.addWidget(self.view)
        self.meta = text_label(waiting if self.streaming else "", "messageMeta")
        buttons: list[QWidget] = [copy_button(self.text, "answer")]
        if actions is not None:
            regenerate = flat_button("Regenerate", "Answer this question again")
            regenerate.clicked.connect(lambda: self._emit(actions.regenerate))
            buttons.append(regenerate)
        self._footer(*buttons, meta=self.meta)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RENDER_INTERVAL_MS)
        self._timer.timeout.connect(self._render)
        self._render()

    def text(self) -> str:
        return self._text

    def set_waiting(self, text: str) -> None:
        if self.streaming and not self._text:
            self.meta.setText(text)

    def append(self, chunk: str) -> None:
        if not self._text:
            self.meta.setText("Writing…")
        self._text += chunk
        if not self._timer.isActive():
            self._timer.start()

    def finish(self, answer: Answer) -> None:
        self.streaming = False
        self._timer.stop()
        if answer.text and answer.text != self._text:
            self._text = answer.text  # tokens still in flight are superseded by the final text
        self.set_stopped(answer.finish_reason == "stopped")
        meta = answer_summary(answer.stats)
        if answer.finish_reason == "length":
            meta = f"{CUT_SHORT} · {meta}"
        self.meta.setText(meta)
        self._render()
        said = "The answer was stopped" if self.stopped else "The answer is ready"
        announce(self, f"{said}: {self._text.strip()}" if self._text.strip() else said)

    def set_stopped(self, stopped: bool) -> None:
        self.stopped = stopped
        self.badge.setVisible(stopped)
        self._render()

    def set_stats(self, stats: AnswerStats | None) -> None:
        self.meta.setText(answer_summary(stats) if stats else "")

    def _render(self) -> None:
        if self.streaming or self._text.strip():
            self.view.set_markdown(self._text)
        elif self.stopped:
            self.view.set_markdown(f"*{STOPPED_EMPTY}*")
        else:  # blank (only spaces or newlines): an empty card would look like a fault
            self.view.set_markdown(f"*{NO_TEXT}*")


class OcrMessage(MessageWidget):
    """Fast-OCR text of one image, with Copy, Save as and Refine with AI."""

    def __init__(self, result: OcrText, image: ImageRef, actions: ChatActions) -> None:
        super().__init__("ocrBubble")
        self.bubble.setAccessibleName("Extracted text")
        self._ocr = result
        self.image = image
        header = QHBoxLayout()
        thumb = Thumbnail(image, OCR_THUMBNAIL_EDGE)
        thumb.clicked.connect(actions.view_image)
        add_image_actions(thumb, image, actions)
        header.addWidget(thumb, 0, Qt.AlignmentFlag.AlignTop)
        titles = QVBoxLayout()
        title = QLabel("Extracted text")
        title.setObjectName("messageAuthor")
        titles.addWidget(title)
        detail = f"{image.name} · {result.seconds:.1f} s" if result.seconds else image.name
        titles.addWidget(text_label(detail, "messageMeta", selectable=False))
        titles.addStretch(1)
        header.addLayout(titles, 1)
        self.body.addLayout(header)
        if result.has_tables:
            self.label: QLabel | MarkdownView = MarkdownView()
            self.label.set_markdown(result.markdown)
        else:
            self.label = text_label(result.text or "No text was found in this image.")
            link_codes(self.label)  # "QR: https://..." opens in the browser
        self.body.addWidget(self.label)
        # Most lines were found but not read (an unknown script): say so, offer the model.
        # Imported here: importing the GUI must not load the OCR package (test_gui_parts).
        from desktop.core.ocr.readability import UNREADABLE_NOTE, readability_of_json

        self.unreadable = readability_of_json(result.json).failed
        if self.unreadable:
            self.body.addWidget(text_label(UNREADABLE_NOTE, "errorText"))
        save = flat_button(
            "Save as…", "Save the text (.txt, .md, .json), the tables (.xlsx, .csv) or a PDF"
        )
        save.clicked.connect(lambda: self._emit(actions.save_text))
        refine: QAbstractButton = flat_button(
            "Refine with AI", "Ask the model to rewrite this image as Markdown"
        )
        if self.unreadable:
            refine = push_button("Read with AI", "primary", "Let the model read this image")
        refine.clicked.connect(lambda: actions.refine.emit(self.image))
        buttons: list[QWidget] = [copy_button(self.text, "extracted text"), save, refine]
        if result.has_tables:
            buttons.insert(1, self._table_button(actions))
        self._footer(*buttons)

    def _table_button(self, actions: ChatActions) -> QToolButton:
        """Table ▾: Save table as… (.xlsx, .csv), Copy table as TSV (pastes as cells)."""
        button = flat_button("Table", "Save or copy the tables found in this image")
        button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(button)
        menu.addAction("Save table as…", lambda: self._emit(actions.save_table))
        menu.addAction("Copy table as TSV", lambda: self._copy_table(actions))
        button.setMenu(menu)
        return button

    def _copy_table(self, actions: ChatActions) -> None:
        copy_to_clipboard(table_tsv(self._ocr))
        actions.told.emit("Copied the table as tab-separated cells.")

    def text(self) -> str:
        return self._ocr.text


class ErrorMessage(MessageWidget):
    def __init__(
        self,
        text: str,
        actions: ChatActions | None = None,
        retry: bool = False,
        regenerate: bool = False,
    ) -> None:
        """`retry`: it answered a question that can be asked again (a Retry button);
        `regenerate`: a Regenerate button too (a question left without any answer)."""
        super().__init__("errorBubble")
        self.bubble.setAccessibleName("Error")
        self._text = text
        label = text_label(text, "errorText")
        self.body.addWidget(label)
        buttons: list[QWidget] = []
        if actions is not None and retry:
            button = flat_button("Retry", "Send the question again")
            button.clicked.connect(lambda: self._emit(actions.retry))
            buttons.append(button)
        if actions is not None and regenerate:
            again = flat_button("Regenerate", "Answer this question again")
            again.clicked.connect(lambda: self._emit(actions.regenerate))
            buttons.append(again)
        self._footer(*buttons, copy_button(self.text, "error message"))

    def text(self) -> str:
        return self._text


class NoteMessage(QWidget):
    """A quiet line between messages (e.g. older turns dropped to fit the context)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.entry_id: int | None = None
        self._text = text
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        label = text_label(text, "noteText")
        label.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        layout.addWidget(label)

    def text(self) -> str:
        return self._text
