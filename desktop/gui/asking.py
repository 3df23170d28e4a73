"""Questions to the engine thread, answers streamed into the chat; Stop, Retry, presets."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut

from desktop.core.chat import GenerationSettings
from desktop.core.history import HistoryError
from desktop.core.presets import get_preset
from desktop.gui.image_ref import ImageRef
from desktop.gui.messages import AssistantMessage, ErrorMessage, NoteMessage, UserMessage
from desktop.gui.worker import AskRequest, AskResult

if TYPE_CHECKING:
    from desktop.gui.main_window import MainWindow

logger = logging.getLogger(__name__)


class AskFlow(QObject):
    answer_shown = Signal(object)  # AskResult, once the window has shown it

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        self.request: AskRequest | None = None  # the question being answered
        self._streaming: AssistantMessage | None = None  # where its tokens go
        worker = window.engine.worker
        worker.token.connect(self._on_token)
        worker.finished.connect(self._on_answer)
        worker.state.connect(self._on_state)
        composer = window.composer
        composer.send_requested.connect(self.send_question)
        composer.preset_requested.connect(self.run_preset)
        composer.stop_requested.connect(self.stop)
        window.actions_hub.refine.connect(self.refine)
        window.actions_hub.retry.connect(self.retry)
        # Esc is only taken while an answer runs, so it still cancels a rename or a menu.
        self._stop_shortcut = QShortcut(QKeySequence("Esc"), window, self.stop)
        self._stop_shortcut.setEnabled(False)

    def generation_settings(self, preset_key: str | None = None) -> GenerationSettings:
        length = self._window.settings.max_new_tokens
        if preset_key:
            return get_preset(preset_key).settings_with(max_new_tokens=length)
        return GenerationSettings(max_new_tokens=length)

    @Slot(str, list)
    def send_question(self, question: str, images: list[ImageRef]) -> None:
        self._ask(question, images, self.generation_settings(), title=question)

    @Slot(str, list)
    def run_preset(self, key: str, images: list[ImageRef]) -> None:
        preset = get_preset(key)
        title = f"{preset.label}: {images[0].name}" if images else preset.label
        self._ask(preset.prompt, images, self.generation_settings(key), title=title)

    @Slot(object)
    def refine(self, ref: ImageRef) -> None:
        """Runs the VLM's Markdown preset on an image whose fast-OCR text is shown."""
        self.run_preset("markdown", [ref])

    @Slot(object)
    def retry(self, error: ErrorMessage) -> None:
        window = self._window
        request = error.retry_request
        if request is None or window.engine.busy:
            return
        if error.message_id is not None:
            try:
                window.store.delete_message(error.message_id)
            except HistoryError as exc:
                logger.warning("could not delete the error message: %s", exc)
        window.chat.remove(error)
        self._submit(
            AskRequest(
                request.conversation_id,
                request.question,
                request.images,
                request.settings,
                user_message_id=request.user_message_id,
                hints=request.hints,
            )
        )

    @Slot()
    def stop(self) -> None:
        if self._window.engine.busy:
            self._window.engine.stop()

    def detach(self) -> None:
        """The chat view is about to show another conversation: stop streaming into it (the
        answer is stopped and saved with its own conversation)."""
        self.stop()
        self._streaming = None

    @Slot()
    def copy_last_answer(self) -> None:
        answer = self._window.chat.last_answer()
        if answer is not None and answer.text():
            QGuiApplication.clipboard().setText(answer.text())
            self._window.status.showMessage("Copied the last answer.", 3000)

    # --- internals -----------------------------------------------------------------------

    def _ask(
        self, question: str, images: list[ImageRef], settings: GenerationSettings, title: str
    ) -> None:
        window = self._window
        if window.engine.busy:
            window.notice.show_message("Wait for the current answer, or stop it (Esc).")
            return
        conversation_id = window.ensure_conversation(title)
        if conversation_id is None:
            return
        window.chat.add(UserMessage(question, images, window.actions_hub))
        window.extraction.update_button()
        hints = window.extraction.known_text(images)
        self._submit(AskRequest(conversation_id, question, images, settings, hints=hints))

    def _submit(self, request: AskRequest) -> None:
        window = self._window
        waiting = "Thinking…" if window.model_loaded else "Waiting for the model to load…"
        self._streaming = AssistantMessage(waiting=waiting)
        window.chat.add(self._streaming)
        self.request = request
        self._set_generating(True)
        window.engine.ask(request)

    def _set_generating(self, generating: bool) -> None:
        self._window.composer.set_generating(generating)
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
        window = self._window
        if result.request is self.request:
            self.request = None
            self._set_generating(False)
        widget, self._streaming = self._streaming, None
        if result.answer.ok:
            window.status.set_stats(result.answer.stats)
        if result.save_error:
            window.notice.show_message(result.save_error, error=True)
        window.sidebar.refresh()
        if widget is not None and result.request.conversation_id == window.conversation_id:
            self._show_answer(widget, result)
        self.answer_shown.emit(result)

    def _show_answer(self, widget: AssistantMessage, result: AskResult) -> None:
        chat, answer = self._window.chat, result.answer
        if answer.ok:
            widget.finish(answer)
            widget.message_id = result.answer_message_id
        else:
            chat.remove(widget)
            result.request.user_message_id = result.user_message_id  # Retry reuses it
            error = ErrorMessage(
                answer.error or "The answer failed.", self._window.actions_hub, result.request
            )
            error.message_id = result.answer_message_id
            chat.add(error)
        for note in result.notes:
            chat.add(NoteMessage(note))
