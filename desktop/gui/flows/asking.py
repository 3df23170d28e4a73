"""Questions to the engine thread, answers streamed into the chat; Stop, Retry, presets."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, AskResult
from desktop.core.presets import Preset
from desktop.core.user_presets import PresetBook, find_preset
from desktop.gui.flows.session import ConversationSession
from desktop.gui.image_ref import ImageRef
from desktop.gui.settings import AppSettings
from desktop.gui.widgets.chat_view import ChatView
from desktop.gui.widgets.composer import Composer
from desktop.gui.widgets.messages import (
    AssistantMessage,
    ChatActions,
    ErrorMessage,
    NoteMessage,
    UserMessage,
)
from desktop.gui.widgets.notice import Notice
from desktop.gui.widgets.status import StatusBar
from desktop.gui.workers.engine_worker import EngineController

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine
    from desktop.gui.workers.local_api import LocalApi

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
    answer_shown = Signal(object)  # AskResult, once the window has shown it

    def __init__(self, parts: ChatParts, engine: EngineController, window: QWidget) -> None:
        super().__init__(window)
        self._parts = parts
        self._controller = engine
        self.request: AskRequest | None = None  # the question being answered
        self._streaming: AssistantMessage | None = None  # where its tokens go
        self._question: UserMessage | None = None  # its bubble, given its id when answered
        self.editing: UserMessage | None = None  # Send replaces this question (edit, resend)
        self.preset_book = PresetBook()  # the user's own prompts (desktop/gui/flows/own_presets.py)
        self.ocr_engine: Callable[[], OcrEngine] | None = None  # for grounded questions
        self._api: LocalApi | None = None  # see follow()
        self._holds: Callable[[int | None], bool] = lambda _id: True
        engine.token.connect(self._on_token)
        engine.finished.connect(self._on_answer)
        engine.state.connect(self._on_state)
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

    def follow(self, api: LocalApi, holds: Callable[[int | None], bool]) -> None:
        """What the answer's first words wait for: a Local API request on the same engine,
        or the chat to be read again (`holds(id)`: the engine's state holds that chat)."""
        self._api = api
        self._holds = holds
        api.busy_changed.connect(self._on_api_busy)

    def generation_settings(self, preset_key: str | None = None) -> GenerationSettings:
        length = self._parts.settings().max_new_tokens
        if preset_key:
            return self.preset(preset_key).settings
        return GenerationSettings(max_new_tokens=length)

    def preset(self, key: str) -> Preset:
        """A built-in or own preset, with the app's answer length unless it has its own."""
        return find_preset(key, self.preset_book, self._parts.settings().max_new_tokens)

    @Slot(str, list)
    def send_question(self, question: str, images: list[ImageRef]) -> None:
        edited, self.editing = self.editing, None
        settings = self.generation_settings()
        if edited is None:
            self._ask(question, images, settings, title=question)
        elif self._drop_from(edited, edited.message_id):
            self._ask(question, images, edited.settings or settings, question, edited.message_id)
        else:  # not confirmed: the edit stays in the composer, still an edit
            self.editing = edited
            self._parts.composer.editor.setPlainText(question)
            self._parts.composer.add_images(images)

    def regenerate(self, answer: AssistantMessage) -> None:
        """Answers the question of `answer` again; it and every later message go."""
        chat = self._parts.chat
        before = chat.messages()[: chat.messages().index(answer)]
        question = next((m for m in reversed(before) if isinstance(m, UserMessage)), None)
        if question is None or self._controller.busy:
            return
        if not self._drop_from(answer, answer.message_id) or question.message_id is None:
            return
        self._question = question
        request = AskRequest(
            question.prompt,
            tuple(question.images),
            question.settings or self.generation_settings(),
            chat=self._parts.session.chat,
            user_message_id=question.message_id,
            hints=tuple(chat.known_text(question.images)),
            rewind_from=answer.message_id,
        )
        self._submit(request)

    @Slot(str, list)
    def run_preset(self, key: str, images: list[ImageRef]) -> None:
        preset = self.preset(key)
        title = f"{preset.label}: {images[0].name}" if images else preset.label
        self._ask(preset.prompt, images, self.generation_settings(key), title=title)

    @Slot(object)
    def refine(self, ref: ImageRef) -> None:
        """Runs the VLM's Markdown preset on an image whose fast-OCR text is shown."""
        self.run_preset("markdown", [ref])

    @Slot(object)
    def retry(self, error: ErrorMessage) -> None:
        request = error.retry_request
        if request is None or self._controller.busy:
            return
        if error.message_id is not None:
            self._parts.session.delete_message(error.message_id)
        self._parts.chat.remove(error)
        self._submit(request)

    @Slot()
    def stop(self) -> None:
        if self._controller.busy:
            self._controller.stop()

    def detach(self) -> None:
        """The chat view is about to show another conversation: stop streaming into it (the
        answer is stopped and saved with its own conversation)."""
        self.stop()
        self._streaming = None
        self._question = None  # its bubble goes with the view
        self._parts.status.set_stats(None)  # the speed line was the other chat's

    @Slot()
    def copy_last_answer(self) -> None:
        answer = self._parts.chat.last_answer()
        if answer is not None and answer.text():
            QGuiApplication.clipboard().setText(answer.text())
            self._parts.status.showMessage("Copied the last answer.", 3000)

    # --- internals -----------------------------------------------------------------------

    def _ask(
        self,
        question: str,
        images: list[ImageRef],
        settings: GenerationSettings,
        title: str,
        rewind_from: int | None = None,
    ) -> None:
        parts = self._parts
        if self._controller.busy:
            parts.notice.show_message("Wait for the current answer, or stop it (Esc).")
            return
        chat = parts.session.ensure(title)
        first = not any(isinstance(m, UserMessage) for m in parts.chat.messages())
        self._question = UserMessage(question, images, parts.actions)
        self._question.settings = settings
        parts.chat.add(self._question)
        grounded = bool(images) and parts.composer.ground_check.isChecked()
        request = AskRequest(
            question,
            tuple(images),
            settings,
            chat=chat,
            hints=tuple(parts.chat.known_text(images)),
            rewind_from=rewind_from,
            ground=self.ocr_engine if grounded else None,
            system=self.preset_book.system_prompt if first else "",
        )
        self._submit(request)

    def _drop_from(self, first: QWidget, message_id: int | None) -> bool:
        """Removes `first` and every later message from the view, after asking when later
        questions would go too. False: not stored yet, or the user said no."""
        parts = self._parts
        if self._controller.busy:
            parts.notice.show_message("Wait for the current answer, or stop it (Esc).")
            return False
        if message_id is None:
            parts.notice.show_message("This message is not in the history; ask again instead.")
            return False
        shown = parts.chat.messages()
        dropped = shown[shown.index(first) :] if first in shown else []
        later = sum(isinstance(m, UserMessage) for m in dropped[1:])
        if later and not confirm_drop(parts.chat, later):
            return False
        for message in dropped:
            parts.chat.remove(message)
        return True

    def _submit(self, request: AskRequest) -> None:
        waiting = self._waiting_text()
        self._streaming = AssistantMessage(waiting=waiting, actions=self._parts.actions)
        self._parts.chat.add(self._streaming)
        self.request = request
        self._set_generating(True)
        if self._controller.model_loaded:  # never "Ready" while Stop shows
            self._parts.status.set_state("generating", waiting)
        self._controller.ask(request)

    def _waiting_text(self) -> str:
        """What the answer waits for before its first words."""
        if not self._controller.model_loaded:
            return "Waiting for the model to load…"
        if self._controller.server:  # it reads the whole chat, each time: its own business
            return f"Waiting for {self._controller.server}…"
        if self._api is not None and self._api.busy:
            return WAITING_FOR_API
        if self._reads_chat():
            return READING_CHAT
        return "Thinking…"

    def _reads_chat(self) -> bool:
        """The question must read the chat's earlier turns again (a reopened chat, or one
        whose state an API request took)."""
        parts = self._parts
        earlier = any(
            isinstance(m, AssistantMessage) and m is not self._streaming
            for m in parts.chat.messages()
        )
        return earlier and not self._holds(parts.session.conversation_id)

    @Slot(bool)
    def _on_api_busy(self, busy: bool) -> None:
        if not busy and self._streaming is not None and self.request is not None:
            # The API's request went first and took the engine's state: the chat is read again.
            self._streaming.set_waiting(READING_CHAT if self._reads_chat() else "Thinking…")

    def _set_generating(self, generating: bool) -> None:
        self._parts.composer.set_generating(generating)
        self._stop_shortcut.setEnabled(generating)

    @Slot(str)
    def _on_state(self, state: str) -> None:
        if state == "loading" and self._streaming is not None:
            self._streaming.set_waiting("Waiting for the model to load…")

    @Slot(str)
    def _on_token(self, chunk: str) -> None:
        if self._streaming is not None:
            self._streaming.append(chunk)

    @Slot(object)
    def _on_answer(self, result: AskResult) -> None:
        parts = self._parts
        if result.request is self.request:
            self.request = None
            self._set_generating(False)
        widget, self._streaming = self._streaming, None
        if self._question is not None and result.user_message_id is not None:
            self._question.message_id = result.user_message_id  # Edit and Regenerate use it
            self._question.set_prompt(result.prompt)
        self._question = None
        # This answer's figures, or none: a failed answer must not leave an older one's.
        parts.status.set_stats(result.answer.stats if result.answer.ok else None)
        if result.save_error:
            parts.notice.show_message(result.save_error, error=True)
        parts.session.changed.emit()
        chat = result.request.chat
        if widget is not None and chat is not None and parts.session.is_open(chat):
            self._show_answer(widget, result)
        self.answer_shown.emit(result)

    def _show_answer(self, widget: AssistantMessage, result: AskResult) -> None:
        chat, answer = self._parts.chat, result.answer
        if answer.ok:
            widget.finish(answer)
            widget.message_id = result.answer_message_id
        else:
            chat.remove(widget)
            retry = result.request.retry(result)  # the stored question, as it was composed
            error = ErrorMessage(answer.error or "The answer failed.", self._parts.actions, retry)
            error.message_id = result.answer_message_id
            chat.add(error)
        for note in result.notes:
            chat.add(NoteMessage(note))


def confirm_drop(parent: QWidget, later_questions: int) -> bool:
    """Asks before a regenerate or an edit drops later turns of the chat."""
    turns = f"the {later_questions} later questions and their answers"
    if later_questions == 1:
        turns = "the next question and its answer"
    reply = QMessageBox.question(
        parent,
        "Drop the later messages?",
        f"This drops {turns} from the chat, for good.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
    )
    return reply == QMessageBox.StandardButton.Yes
