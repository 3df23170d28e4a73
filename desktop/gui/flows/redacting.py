"""Redaction in the app (issue 49): "Redact before sending" on an attached picture, and the
offer before a chat's first picture goes to a model server.

The picture is read and filled in the thread pool (`workers/redactor.py`); the chip is then
replaced by the redacted copy, whose OCR text with tags (`[email]`) stands for its pixels:
grounding, drafts and Extract text use it (`known_reads`, `read_of`), so no private text
reaches a prompt or an export. A notice always says what happened: what was filled, that
nothing was found, that the page could not be read, or what the OCR still reads (then the
original stays attached). With a server's model, the first question with pictures (or naming
private data) in a chat asks "Redact and send" / "Send as is" (`gate`, called by AskFlow);
redacting, its pictures are filled and its words tagged, and so are the chat's later ones.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from desktop.core.conversation.models import KnownRead
from desktop.core.history.handle import ChatHandle
from desktop.core.privacy.models import counted, items
from desktop.core.privacy.patterns import PatternError, UserPattern, compile_patterns
from desktop.core.privacy.spans import tag_text
from desktop.core.privacy.user_patterns import check_patterns, read_patterns, write_patterns
from desktop.core.regions import Region
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import count_of
from desktop.gui.workers.engine_status import ServerModel
from desktop.gui.workers.redactor import Redacted, Redactor

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine
    from desktop.core.ocr.models import OcrResult
    from desktop.gui.flows.asking import ChatParts
    from desktop.gui.widgets.composer import Composer
    from desktop.gui.workers.engine_worker import EngineController
    from desktop.gui.workers.storage_worker import StorageController

logger = logging.getLogger(__name__)
Send = Callable[[str, list[ImageRef]], None]
Choice = Literal["redact", "as_is"]
OFFER_TITLE = "Redact before sending?"
REDACT_ACTION = "Redact before sending"


@dataclass
class _Batch:
    """A question held while its pictures are redacted, sent when the last one is done."""

    question: str
    images: list[ImageRef]
    regions: tuple[Region, ...]
    send: Send
    waiting: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


class RedactFlow(QObject):
    finished = Signal(Redacted)  # after the chip or the held question was updated

    def __init__(
        self,
        parts: ChatParts,
        ocr_engine: Callable[[], OcrEngine],
        engine: EngineController,
        storage: StorageController,
        data_dir: Path,
        window: QWidget,
    ) -> None:
        super().__init__(window)
        self._parts, self._engine, self._storage = parts, engine, storage
        self._data_dir, self._window = data_dir, window
        self.redactor = Redactor(ocr_engine, self)
        self.redactor.done.connect(self._on_done)
        self._reads: dict[str, OcrResult] = {}  # redacted copy's digest -> its tagged text
        self._lock = threading.Lock()  # `read_of` is called on the OCR thread
        self._singles: dict[int, ImageRef] = {}  # ticket -> the chip being redacted
        self._batches: dict[int, _Batch] = {}  # ticket -> the held question it belongs to
        self._choices: weakref.WeakKeyDictionary[ChatHandle, Choice] = weakref.WeakKeyDictionary()
        self._chosen: dict[int, Choice] = {}  # stored chats (a reopened one's new handle)
        self.offer_box: QMessageBox | None = None
        self.sources: tuple[str, ...] = ()
        self.patterns: tuple[UserPattern, ...] = ()
        self._load_patterns()
        parts.composer.attachments_changed.connect(self._add_actions)

    # --- the user's patterns -----------------------------------------------------------------

    def _load_patterns(self) -> None:
        try:
            self.sources = read_patterns(self._data_dir)
            self.patterns = compile_patterns(self.sources)
        except PatternError as exc:
            self._parts.notice.show_message(
                f"{exc} Only the built-in kinds are redacted.", error=True
            )

    def save_patterns(self, sources: Sequence[str]) -> None:
        """Checked here (PatternError says which one is wrong), written on the storage thread."""
        compiled = check_patterns(sources)
        self.sources, self.patterns = tuple(sources), compiled
        folder, kept = self._data_dir, list(sources)
        self._storage.submit(
            lambda: write_patterns(folder, kept),
            on_error=lambda text: self._parts.notice.show_message(text, error=True),
        )

    # --- "Redact before sending" on a chip ---------------------------------------------------

    @Slot()
    def _add_actions(self, *_args: object) -> None:
        """Every chip's menu: Extract text, Ask about a region…, Redact before sending, Remove."""
        for chip in self._parts.composer.chips():
            if not any(action.text() == REDACT_ACTION for action in chip.actions()):
                action = QAction(REDACT_ACTION, chip)
                action.triggered.connect(lambda _=False, ref=chip.ref: self.redact(ref))
                chip.insertAction(chip.actions()[-1], action)  # before its Remove

    @property
    def busy(self) -> bool:
        """A redaction is running (its result has not come back)."""
        return bool(self._singles or self._batches)

    @Slot(object)
    def redact(self, ref: ImageRef) -> int:
        ticket = self.redactor.submit(ref, self.patterns)
        self._singles[ticket] = ref
        self._parts.status.showMessage(f"Redacting {ref.name}…")
        return ticket

    @Slot(object)
    def _on_done(self, result: Redacted) -> None:
        if result.copy is not None and result.redaction is not None:
            with self._lock:
                self._reads[result.copy.digest] = result.redaction.result
        self._parts.status.clearMessage()
        if result.ticket in self._singles:
            self._finish_single(self._singles.pop(result.ticket), result)
        elif result.ticket in self._batches:
            self._finish_in_batch(self._batches.pop(result.ticket), result)
        self.finished.emit(result)

    def _finish_single(self, ref: ImageRef, result: Redacted) -> None:
        if result.copy is not None and ref in self._parts.composer.attachments():
            _replace(self._parts.composer, ref, result.copy)
        text, error = notice_for(result)
        self._parts.notice.show_message(text, error=error)

    # --- the grounding and the extraction of a redacted copy --------------------------------

    def read_of(self, digest: str) -> OcrResult | None:
        """The tagged text of a redacted copy (any thread): it stands for the filled pixels."""
        with self._lock:
            return self._reads.get(digest)

    def known_reads(self, images: Sequence[ImageRef]) -> tuple[KnownRead, ...]:
        found = ((ref.digest, self.read_of(ref.digest)) for ref in images)
        return tuple(KnownRead(digest, read) for digest, read in found if read is not None)

    # --- the offer before a server gets a chat's first picture -------------------------------

    def gate(self, question: str, images: list[ImageRef], send: Send) -> bool:
        """Called by AskFlow before a question goes out. False: send it now, as it is. True:
        this flow holds it and sends it (or puts it back in the composer) itself."""
        if not isinstance(self._engine.status.source, ServerModel):
            return False
        chat = self._parts.session.chat
        choice = self._choices.get(chat) or (self._chosen.get(chat.id) if chat.id else None)
        if choice is not None:
            self._remember(chat, choice)  # a new chat has its id now: kept for its reopening
        private = tag_text(question, self.patterns) != question
        if choice == "as_is" or (choice is None and not images and not private):
            return False
        regions = self._parts.composer.regions_sent
        if choice == "redact":
            self._redact_and_send(question, images, regions, send)
            return True
        self._offer(chat, question, images, regions, send)
        return True

    def _offer(
        self,
        chat: ChatHandle,
        question: str,
        images: list[ImageRef],
        regions: tuple[Region, ...],
        send: Send,
    ) -> None:
        source = self._engine.status.source
        host = source.host if isinstance(source, ServerModel) else "the model server"
        box = QMessageBox(self._window)
        box.setWindowTitle(OFFER_TITLE)
        what = (
            "This chat's pictures are" if images else "Your question, which names private data, is"
        )
        box.setText(f"{what} about to go to {host}.")
        box.setInformativeText(
            "Redact fills e-mail addresses, IBANs, card and phone numbers and your own patterns "
            "on the pictures, and tags them in your question, before anything leaves this "
            "computer. The choice holds for this chat."
        )
        redact = box.addButton("Redact and send", QMessageBox.ButtonRole.AcceptRole)
        as_is = box.addButton("Send as is", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(redact)
        self.offer_box = box

        def chosen(_result: int) -> None:
            self.offer_box = None
            clicked = box.clickedButton()
            if clicked is redact or clicked is as_is:
                self._remember(chat, "redact" if clicked is redact else "as_is")
            if clicked is redact:
                self._redact_and_send(question, images, regions, send)
            elif clicked is as_is:
                _send(self._parts, send, question, images, regions)
            else:  # cancelled: the question and its pictures back where they were
                self._parts.composer.editor.setPlainText(question)
                self._parts.composer.add_images(images)
            box.deleteLater()

        box.finished.connect(chosen)
        box.open()

    def _remember(self, chat: ChatHandle, choice: Choice) -> None:
        self._choices[chat] = choice
        if chat.id is not None:
            self._chosen[chat.id] = choice

    def _redact_and_send(
        self, question: str, images: list[ImageRef], regions: tuple[Region, ...], send: Send
    ) -> None:
        tagged = tag_text(question, self.patterns)
        batch = _Batch(tagged, list(images), regions, send)
        if tagged != question:
            batch.notes.append("Your question's private words were replaced by tags.")
        todo = [ref for ref in images if self.read_of(ref.digest) is None]  # not redacted yet
        for ref in todo:
            ticket = self.redactor.submit(ref, self.patterns)
            batch.waiting.add(ticket)
            self._batches[ticket] = batch
        if todo:
            self._parts.status.showMessage(
                f"Redacting {count_of(len(todo), 'picture')} before sending…"
            )
        else:
            self._send_batch(batch)

    def _finish_in_batch(self, batch: _Batch, result: Redacted) -> None:
        batch.waiting.discard(result.ticket)
        text, error = notice_for(result)
        if result.copy is not None:
            batch.images = [result.copy if r is result.original else r for r in batch.images]
        elif result.redaction is None or result.redaction.outcome in ("leaked", "unproven"):
            batch.images = [r for r in batch.images if r is not result.original]
            text += " It was not sent."
        batch.notes.append(text)
        if not batch.waiting:
            self._send_batch(batch)

    def _send_batch(self, batch: _Batch) -> None:
        if batch.notes:
            error = any("not sent" in note for note in batch.notes)
            self._parts.notice.show_message(" ".join(batch.notes), error=error)
        _send(self._parts, batch.send, batch.question, batch.images, batch.regions)


def _replace(composer: Composer, old: ImageRef, new: ImageRef) -> None:
    """`new` (the redacted copy, the same size) in `old`'s place, with the boxes drawn on it;
    the chips after it are put back after it with theirs."""
    refs = composer.attachments()
    after = refs[refs.index(old) + 1 :]
    boxes = {id(ref): composer.marks.of(ref) for ref in [old, *after]}
    for ref in [old, *after]:
        composer.remove_image(ref)
    composer.add_images([new, *after])
    for ref, was in [(new, old), *((ref, ref) for ref in after)]:
        if boxes[id(was)]:
            composer.set_regions(ref, boxes[id(was)])


def _send(
    parts: ChatParts, send: Send, question: str, images: list[ImageRef], regions: tuple[Region, ...]
) -> None:
    """The held question sent as the composer sends one: its boxes in `regions_sent`."""
    composer = parts.composer
    composer.regions_sent = regions
    try:
        send(question, images)
    finally:
        composer.regions_sent = ()


def notice_for(result: Redacted) -> tuple[str, bool]:
    """The notice for one redaction: its sentence, and whether it is an error."""
    name = result.original.name
    redaction = result.redaction
    if redaction is None:
        return result.error or f"Could not redact {name}.", True
    outcome = redaction.outcome
    if outcome == "redacted":
        found = count_of(items(redaction.spans), "item")
        text = f"Redacted {found} in {name} ({counted(redaction.spans)})."
    elif outcome in ("clean", "unreadable"):
        text = f"{name}: {redaction.summary()}"
    else:
        text = f"{name}: {redaction.summary().replace('nothing was saved', 'it was not replaced')}"
    warning = redaction.warning()
    failed = outcome in ("leaked", "unreadable", "unproven")
    return (f"{text} {warning}" if warning else text), failed


def offer_buttons(box: QMessageBox) -> dict[str, QPushButton]:
    """The offer's buttons by their text (tests click them)."""
    return {b.text(): b for b in box.buttons() if isinstance(b, QPushButton)}
