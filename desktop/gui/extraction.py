"""One-click text extraction: OCR jobs to the OCR thread, results into the chat, batch
progress in the status bar."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from desktop.core.history.ocr_text import OcrText
from desktop.core.refine import ocr_source_texts
from desktop.gui import export
from desktop.gui.image_ref import ImageRef
from desktop.gui.messages import ErrorMessage, OcrMessage, UserMessage
from desktop.gui.ocr_worker import OcrJob, OcrOutcome

if TYPE_CHECKING:
    from desktop.gui.main_window import MainWindow


class ExtractionFlow(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        worker = window.ocr.worker
        worker.extracted.connect(self._on_extracted)
        worker.progress.connect(self._on_progress)
        worker.job_finished.connect(self._on_job_finished)
        worker.failed.connect(lambda text: window.notice.show_message(text, error=True))
        window.actions_hub.extract_text.connect(self.extract_text)
        window.actions_hub.save_text.connect(self.save_text)
        window.composer.extract_requested.connect(lambda ref: self.extract_text([ref]))
        window.composer.attachments_changed.connect(lambda _count: self.update_button())
        window.status.cancel_batch.connect(window.ocr.cancel_all)
        window.extract_all_button.clicked.connect(self.extract_all)

    @Slot(object)
    def extract_text(self, refs: list[ImageRef]) -> None:
        window = self._window
        if not refs:
            return
        conversation_id = window.ensure_conversation(f"Text from {refs[0].name}")
        if conversation_id is None:
            return
        job = OcrJob(conversation_id, list(refs))
        if job.is_batch:
            window.status.set_batch(0, len(refs))
        else:
            window.status.showMessage(f"Extracting text from {refs[0].name}…")
        window.ocr.run(job)

    @Slot()
    def extract_all(self) -> None:
        """Every attached image (they are used up); with none attached, every image shown
        in the chat."""
        composer = self._window.composer
        refs = composer.attachments()
        if refs:
            composer.clear_images()
        else:
            refs = self.chat_images()
        if not refs:
            self._window.notice.show_message("Drop, paste or attach screenshots first.")
            return
        self.extract_text(refs)

    def chat_images(self) -> list[ImageRef]:
        seen: dict[str, ImageRef] = {}
        for message in self._window.chat.messages():
            if isinstance(message, UserMessage):
                for ref in message.images:
                    seen.setdefault(ref.digest, ref)
        return list(seen.values())

    def known_text(self, refs: list[ImageRef]) -> list[str]:
        """The fast-OCR text the chat already shows for these images (Extract text was
        clicked): the answer often copies it, so the model drafts from it."""
        digests = {ref.digest for ref in refs}
        texts: dict[str, None] = {}  # ordered and without repeats
        for message in self._window.chat.messages():
            if isinstance(message, OcrMessage) and message.image.digest in digests:
                result = message.result
                texts.update(dict.fromkeys(ocr_source_texts(result.text, result.markdown)))
        return list(texts)

    def update_button(self) -> None:
        window = self._window
        window.extract_all_button.setEnabled(
            bool(window.composer.attachments() or self.chat_images())
        )

    @Slot(object)
    def save_text(self, result: OcrText) -> None:
        window = self._window
        try:
            path = export.save_text(window, result)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            window.notice.show_message(f"Could not save the text: {reason}.", error=True)
            return
        if path is not None:
            window.status.showMessage(f"Saved {path.name}.", 4000)

    @Slot(object)
    def _on_extracted(self, outcome: OcrOutcome) -> None:
        window = self._window
        if outcome.job.conversation_id != window.conversation_id:
            return  # stored with its own chat
        if outcome.text is None:
            window.chat.add(ErrorMessage(outcome.error or "The text could not be read."))
            return
        message = OcrMessage(outcome.text, outcome.image, window.actions_hub)
        message.message_id = outcome.message_id
        window.chat.add(message)

    @Slot(object, int, int)
    def _on_progress(self, job: OcrJob, done: int, total: int) -> None:
        if job.is_batch:
            self._window.status.set_batch(done, total)

    @Slot(object)
    def _on_job_finished(self, job: OcrJob) -> None:
        window = self._window
        window.status.end_batch()
        window.status.clearMessage()
        window.sidebar.refresh()
        if job.cancelled:
            done, total = len(job.done), len(job.images)
            window.notice.show_message(f"Text extraction cancelled after {done} of {total} images.")
