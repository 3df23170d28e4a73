"""Questions to the engine thread, answers streamed into the chat; Stop, Retry, Regenerate,
presets. The open chat is the session's `Transcript`: questions and answers are added to it
and shown by the chat view; Retry, Regenerate and Edit name an entry by id and ask
`Transcript.request_for` how to ask it again (its own settings, also after a restart)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import (
    AskRequest,
    AskResult,
    Ground,
    KnownRead,
    NoContext,
    StoredChat,
)
from desktop.core.conversation.transcript import Edit, Entry, Means
from desktop.core.history import AskedWith, Role
from desktop.core.presets import Preset
from desktop.core.user_presets import PresetBook, find_preset
from desktop.gui.flows.answers import add_answer, show_late_answer
from desktop.gui.flows.session import ConversationSession
from desktop.gui.image_ref import ImageRef
from desktop.gui.settings import AppSettings
from desktop.gui.widgets.chat_view import ChatView
from desktop.gui.widgets.composer import Composer
from desktop.gui.widgets.messages import ChatActions
from desktop.gui.widgets.notice import Notice
from desktop.gui.widgets.region_picker import regions_by_image
from desktop.gui.widgets.status import StatusBar
from desktop.gui.workers.engine_worker import EngineController

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine

WAITING_FOR_API = "Waiting for a Local API request to finish…"
READING_CHAT = "Reading the chat…"

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChatParts:
    """What the flows of the chat page work with: the open conversation, the views, and
    the current settings (a function: the window replaces them when they change)."""

    session: ConversationSession
    chat: ChatView
    composer: Composer
    notice: Notice
    status: StatusBar
    actions: ChatActions
    settings: Callable[[], AppSettings]


class AskFlow(QObject):
    answer_shown = Signal(AskResult)  # once the window has shown it

    def __init__(self, parts: ChatParts, engine: EngineController, window: QWidget) -> None:
        super().__init__(window)
        self._parts = parts
        self._controller = engine
        self.request: AskRequest | None = None  # the question being answered
        self._question: int | None = None  # its entry, shown here (None: not, or detached)
        self.editing: int | None = None  # Send replaces this question's entry (edit, resend)
        self.preset_book = PresetBook()  # the user's own prompts (desktop/gui/flows/own_presets.py)
        self.ocr_engine: Callable[[], OcrEngine] | None = None  # for grounded questions
        # The readability guard's "More detail" for images, its reads (legibility_check.py).
        self.image_detail: Callable[[Sequence[ImageRef]], int | None] = lambda _images: None
        self.image_reads: Callable[[Sequence[ImageRef]], tuple[KnownRead, ...]] = lambda _images: ()
        self.send_gate: Callable[..., bool] = lambda *_args: False  # True: it holds the question
        engine.token.connect(self._on_token)
        engine.finished.connect(self._on_answer)
        engine.state.connect(self._on_state)
        engine.api_busy.connect(self._on_api_busy)
        composer = parts.composer
        composer.send_requested.connect(self.send_question)
        composer.preset_requested.connect(self.run_preset)
        composer.stop_requested.connect(self.stop)
        parts.actions.refine.connect(self.refine)
        parts.actions.retry.connect(self.retry)
        parts.session.opened.connect(lambda _chat: self.detach())
        # Esc is only taken while an answer runs, so it still cancels a rename or a menu.
        self._stop_shortcut = QShortcut(QKeySequence("Esc"), window, self.stop)
        self._stop_shortcut.setEnabled(False)

    def generation_settings(self, preset_key: str | None = None) -> GenerationSettings:
        length = self._parts.settings().max_new_tokens
        if preset_key:
            return self.preset(preset_key).settings
        return GenerationSettings(max_new_tokens=length)

    def settings_for(
        self, images: Sequence[ImageRef], preset_key: str | None = None
    ) -> GenerationSettings:
        """What a question about `images` is asked with: `generation_settings`, at the
        readability guard's budget where "More detail" was chosen for them."""
        settings = self.generation_settings(preset_key)
        tokens = self.image_detail(images)
        return settings if tokens is None else replace(settings, max_visual_tokens=tokens)

    def next_settings(self) -> GenerationSettings:
        """What the question being typed will be asked with (reading ahead prepares so)."""
        return self.settings_for(self._parts.composer.attachments())

    def preset(self, key: str) -> Preset:
        """A built-in or own preset, with the app's answer length unless it has its own."""
        return find_preset(key, self.preset_book, self._parts.settings().max_new_tokens)

    def means(self) -> Means:
        """What asking a question again needs beside the transcript."""
        return Means(self.generation_settings(), self.ocr_engine, self.preset_book.system_prompt)

    @Slot(str, list)
    def send_question(self, question: str, images: list[ImageRef], gated: bool = True) -> None:
        send = lambda q, i: self.send_question(q, i, False)  # noqa: E731 (after redaction)
        if gated and self.editing is None and self.send_gate(question, images, send):
            return
        edited, self.editing = self.editing, None
        if edited is None:
            self._ask(question, images, self.settings_for(images), title=question)
        elif not self._resend(edited, question, images):
            # not confirmed: the edit stays in the composer, still an edit
            self.editing = edited
            composer = self._parts.composer
            regions = composer.regions_sent
            composer.editor.setPlainText(question)
            composer.add_images(images)
            for ref, boxes in regions_by_image(images, regions):
                composer.set_regions(ref, boxes)  # kept with the edit, as drawn

    @Slot(int)
    def regenerate(self, entry_id: int) -> None:
        """Answers the question of the answer `entry_id` again; it and every later entry go."""
        self._ask_again(entry_id)

    @Slot(int)
    def retry(self, entry_id: int) -> None:
        """Asks the question of the error `entry_id` again; the error (and what followed) go."""
        self._ask_again(entry_id)

    @Slot(str, list)
    def run_preset(self, key: str, images: list[ImageRef], gated: bool = True) -> None:
        if gated and self.send_gate(key, images, lambda _q, i: self.run_preset(key, i, False)):
            return
        preset = self.preset(key)
        title = f"{preset.label}: {images[0].name}" if images else preset.label
        self._ask(preset.prompt, images, self.settings_for(images, key), title, preset=key)

    @Slot(object)
    def refine(self, ref: ImageRef) -> None:
        """Runs the VLM's Markdown preset on an image whose fast-OCR text is shown."""
        self.run_preset("markdown", [ref])

    @Slot()
    def stop(self) -> None:
        if self._controller.status.asking:
            self._controller.stop()

    def detach(self) -> None:
        """Another chat is about to show: the answer stops (saved with its own chat)."""
        self.stop()
        self._question = None  # its bubble goes with the view
        self._parts.status.set_stats(None)  # the speed line was the other chat's

    @Slot()
    def copy_last_answer(self) -> None:
        answer = self._parts.session.transcript.last_answer()
        if answer is not None and answer.text:
            QGuiApplication.clipboard().setText(answer.text)
            self._parts.status.showMessage("Copied the last answer.", 3000)

    # --- internals -----------------------------------------------------------------------

    def _ask(
        self,
        question: str,
        images: list[ImageRef],
        settings: GenerationSettings,
        title: str,
        preset: str | None = None,
    ) -> None:
        parts = self._parts
        if self._is_busy():
            return
        chat = parts.session.ensure(title)
        transcript = parts.session.transcript
        ocr = self.ocr_engine if images and parts.composer.ground_check.isChecked() else None
        system = "" if transcript.questions() else self.preset_book.system_prompt
        regions = parts.composer.regions_sent  # the boxes drawn on its images
        request = AskRequest(
            question,
            tuple(images),
            settings,
            StoredChat(chat),
            hints=tuple(transcript.known_text(images)),
            context=Ground(ocr) if ocr is not None else NoContext(),
            system=system,
            preset=preset,
            regions=regions,
            known_reads=self._known_reads(images),
        )
        asked = AskedWith(settings, preset, request.grounded, bool(system), regions)
        self._show_question(request, asked)
        self._submit(request)

    def _resend(self, entry_id: int, question: str, images: list[ImageRef]) -> bool:
        """Sends the edited question `entry_id` in its place. False: not confirmed."""
        session = self._parts.session
        entry = session.transcript.get(entry_id)
        if entry is None:  # its chat was closed meanwhile: a question of its own
            self._ask(question, images, self.generation_settings(), title=question)
            return True
        edit = Edit(question, tuple(images))
        request = session.transcript.request_for(entry_id, session.chat, self.means(), edit)
        if request is None or not self._drop_from(entry):
            return False
        # The boxes as the composer has them now: the edit's own, drawn or kept.
        request = replace(request, regions=self._parts.composer.regions_sent)
        self._show_question(request, replace(entry.asked, regions=request.regions))
        self._submit(request)
        return True

    def _ask_again(self, entry_id: int) -> None:
        session = self._parts.session
        transcript = session.transcript
        entry, question = transcript.get(entry_id), transcript.question_of(entry_id)
        if entry is None or question is None or self._is_busy():
            return
        request = transcript.request_for(entry_id, session.chat, self.means())
        if request is None or (entry is not question and not self._drop_from(entry)):
            return
        if entry is question:  # its no-answer card's Retry: the card goes, the question stays
            self._parts.chat.drop_unanswered(entry.id)
        self._question = question.id
        self._submit(request)

    def _known_reads(self, images: Sequence[ImageRef]) -> tuple[KnownRead, ...]:
        """The reads the window has of `images`: the chat's extractions, then the readability
        guard's of the pictures not extracted; each picture is read once."""
        extracted = self._parts.session.transcript.known_reads(images)
        have = {read.digest for read in extracted}
        return extracted + tuple(r for r in self.image_reads(images) if r.digest not in have)

    def _show_question(self, request: AskRequest, asked: AskedWith) -> None:
        transcript = self._parts.session.transcript
        entry = transcript.add(Role.USER, request.question, images=request.images, asked=asked)
        self._parts.chat.show_entry(entry)
        self._question = entry.id

    def _is_busy(self) -> bool:
        asking = self._controller.status.asking
        if asking:
            self._parts.notice.show_message("Wait for the current answer, or stop it (Esc).")
        return asking

    def _drop_from(self, entry: Entry) -> bool:
        """Removes `entry` and every later one from the chat, after asking when later
        questions or extractions would go too. False: not stored yet, or the user said no
        (an error may be unstored: its question is asked again all the same)."""
        parts = self._parts
        if self._is_busy():
            return False
        if entry.message_id is None and entry.role is not Role.ERROR:
            parts.notice.show_message("This message is not in the history; ask again instead.")
            return False
        transcript = parts.session.transcript
        later = transcript.from_entry(entry.id)[1:]
        questions = sum(e.role is Role.USER for e in later)
        extractions = sum(e.role is Role.OCR for e in later)
        if (questions or extractions) and not confirm_drop(parts.chat, questions, extractions):
            return False
        parts.chat.remove_entries([e.id for e in transcript.drop_from(entry.id)])
        return True

    def _submit(self, request: AskRequest) -> None:
        if isinstance(request.where, StoredChat):
            self._parts.session.dropping(request.where.drops)
        waiting = self._waiting_text()
        self._parts.chat.begin_answer(waiting)
        self.request = request
        self._set_generating(True)
        if self._controller.status.loaded:  # never "Ready" while Stop shows
            self._parts.status.set_state("generating", waiting)
        self._controller.ask(request)

    def _waiting_text(self) -> str:
        """What the answer waits for before its first words."""
        status = self._controller.status
        if not status.loaded:
            return "Waiting for the model to load…"
        if status.server:  # it reads the whole chat, each time: its own business
            return f"Waiting for {status.server}…"
        if status.api:
            return WAITING_FOR_API
        if self._reads_chat():
            return READING_CHAT
        return "Thinking…"

    def _reads_chat(self) -> bool:
        """The question must read the chat's earlier turns again (a reopened chat the engine
        does not hold yet)."""
        parts = self._parts
        earlier = parts.session.transcript.has_answers()
        return earlier and self._controller.status.holds != parts.session.conversation_id

    @Slot(bool)
    def _on_api_busy(self, busy: bool) -> None:
        if not busy and self._parts.chat.answering() and self.request is not None:
            # The API's request went first (in its own lane: the chat is still held).
            self._parts.chat.set_waiting(READING_CHAT if self._reads_chat() else "Thinking…")

    def _set_generating(self, generating: bool) -> None:
        self._parts.composer.set_generating(generating)
        self._stop_shortcut.setEnabled(generating)

    @Slot(str)
    def _on_state(self, state: str) -> None:
        if state == "loading":
            self._parts.chat.set_waiting("Waiting for the model to load…")

    @Slot(str)
    def _on_token(self, chunk: str) -> None:
        self._parts.chat.stream(chunk)

    @Slot(object)
    def _on_answer(self, result: AskResult) -> None:
        parts = self._parts
        if result.request is self.request:
            self.request = None
            self._set_generating(False)
        question, self._question = self._question, None
        if isinstance(result.request.where, StoredChat):
            parts.session.dropped(result.request.where.drops)
        # This answer's figures, or none: a failed answer must not leave an older one's.
        parts.status.set_stats(result.answer.stats if result.answer.ok else None)
        if result.save_error:
            parts.notice.show_message(result.save_error, error=True)
        parts.session.changed.emit()
        chat = result.request.chat
        if question is not None and chat is not None and parts.session.is_open(chat):
            self._show_answer(question, result)
        elif chat is not None and parts.session.is_open(chat):  # opened again while it ran
            show_late_answer(parts.session.transcript, parts.chat, result)
        self.answer_shown.emit(result)

    def _show_answer(self, question_id: int, result: AskResult) -> None:
        """The result into the transcript (the question's stored id and prompt, the answer
        or error, the notes), and into the view."""
        transcript, chat, answer = self._parts.session.transcript, self._parts.chat, result.answer
        if result.user_message_id is not None:
            question = transcript.update(
                question_id, message_id=result.user_message_id, prompt=result.prompt
            )
            if question is not None:
                chat.show_prompt(question)
        chat.end_answer(add_answer(transcript, result), answer)
        for note in result.notes:
            chat.show_entry(transcript.add(Role.NOTE, note))


def confirm_drop(parent: QWidget, later_questions: int, extractions: int = 0) -> bool:
    """Asks before a regenerate, a retry or an edit drops later turns of the chat."""
    turns = f"the {later_questions} later questions and their answers"
    if later_questions == 1:
        turns = "the next question and its answer"
    cards = "the extracted text after it" if extractions == 1 else "the later extracted texts"
    if not later_questions:
        turns = cards
    elif extractions:
        turns = f"{turns}, and {cards}"
    reply = QMessageBox.question(
        parent,
        "Drop the later messages?",
        f"This drops {turns} from the chat, for good.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
    )
    return reply == QMessageBox.StandardButton.Yes
