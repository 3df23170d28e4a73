"""One-click text extraction: OCR jobs to the OCR thread, results into the chat, batch
progress in the status bar."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QPushButton, QWidget

from desktop.core.conversation.transcript import EntryState
from desktop.core.history import HistoryError, Role
from desktop.core.images import ImageError
from desktop.core.ocr.formats import OutputFormat
from desktop.gui.flows import save_as
from desktop.gui.flows.asking import ChatParts
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.announce import announce
from desktop.gui.widgets.basics import count_of
from desktop.gui.workers.ocr_worker import OcrController, OcrJob, OcrOutcome


class ExtractionFlow(QObject):
    def __init__(
        self, parts: ChatParts, ocr: OcrController, button: QPushButton, window: QWidget
    ) -> None:
        super().__init__(window)
        self._parts = parts
        self._ocr = ocr
        self._button = button
        self._window = window  # the parent of the save dialog
        ocr.extracted.connect(self._on_extracted)
        ocr.progress.connect(self._on_progress)
        ocr.job_finished.connect(self._on_job_finished)
        ocr.failed.connect(lambda text: parts.notice.show_message(text, error=True))
        parts.actions.extract_text.connect(self.extract_text)
        parts.actions.save_text.connect(self.save_text)
        parts.actions.save_table.connect(self.save_table)
        parts.composer.extract_requested.connect(lambda ref: self.extract_text([ref]))
        parts.composer.attachments_changed.connect(lambda _count: self.update_button())
        parts.chat.contents_changed.connect(self.update_button)
        parts.status.cancel_batch.connect(ocr.cancel_all)
        button.clicked.connect(self.extract_all)
        self.update_button()

    @Slot(object)
    def extract_text(self, refs: list[ImageRef]) -> None:
        if not refs:
            return
        chat = self._parts.session.ensure(f"Text from {refs[0].name}")
        job = OcrJob(chat, list(refs))
        status = self._parts.status
        if job.is_batch:
            status.set_batch(0, len(refs))
        else:
            status.showMessage(f"Extracting text from {refs[0].name}…")
        self._ocr.run(job)

    @Slot()
    def extract_all(self) -> None:
        """Every attached image (they are used up); with none attached, every image shown
        in the chat."""
        composer = self._parts.composer
        refs = composer.attachments()
        if refs:
            composer.clear_images()
        else:
            refs = self._parts.chat.images()
        if not refs:
            self._parts.notice.show_message("Drop, paste or attach screenshots first.")
            return
        self.extract_text(refs)

    @Slot()
    def update_button(self) -> None:
        parts = self._parts
        self._button.setEnabled(bool(parts.composer.attachments() or parts.chat.images()))

    @Slot(int)
    def save_text(self, entry_id: int) -> None:
        """Save as…: the text, the tables or a searchable PDF, by the extension chosen."""
        self._save(entry_id, save_as.FORMATS, "Save extracted text")

    @Slot(int)
    def save_table(self, entry_id: int) -> None:
        self._save(entry_id, save_as.TABLE_FORMATS, "Save table")

    def _save(self, entry_id: int, formats: Sequence[OutputFormat], title: str) -> None:
        """Asks where (on this thread: a dialog), then makes and writes the file on the
        storage thread (a workbook or a PDF takes a moment; the image may be decoded)."""
        entry = self._parts.session.transcript.get(entry_id)
        if entry is None or entry.ocr is None or not entry.images:
            return
        result, image, parts = entry.ocr, entry.images[0], self._parts
        chosen = save_as.ask_save_path(self._window, result, formats=formats, title=title)
        if chosen is None:
            return
        path, fmt = chosen

        def save() -> None:
            try:
                content = save_as.file_content(result, fmt, image.load)
            except (ValueError, ImageError) as exc:  # no table for a CSV; the image is gone
                raise HistoryError(str(exc)) from exc
            save_as.write_file(path, content)

        def saved(_result: object) -> None:
            parts.status.showMessage(f"Saved {path.name}.", 4000)

        def failed(sentence: str) -> None:
            parts.notice.show_message(sentence, error=True)

        parts.session.storage.submit(save, saved, failed)

    @Slot(object)
    def _on_extracted(self, outcome: OcrOutcome) -> None:
        parts = self._parts
        if not parts.session.is_open(outcome.job.chat):
            return  # stored with its own chat
        transcript = parts.session.transcript
        if outcome.text is None:  # not an answer's error: no kind, no Retry
            error = outcome.error or "The text could not be read."
            parts.chat.show_entry(transcript.add(Role.ERROR, error, state=EntryState.FAILED))
            return
        entry = transcript.add(
            Role.OCR,
            outcome.text.text,
            images=(outcome.image,),
            ocr=outcome.text,
            message_id=outcome.message_id,
        )
        parts.chat.show_entry(entry)
        lines = count_of(len(outcome.text.text.splitlines()), "line")
        announce(parts.chat, f"Text extracted from {outcome.image.name}: {lines}.")

    @Slot(object, int, int)
    def _on_progress(self, job: OcrJob, done: int, total: int) -> None:
        if job.is_batch:
            self._parts.status.set_batch(done, total)

    @Slot(object)
    def _on_job_finished(self, job: OcrJob) -> None:
        parts = self._parts
        parts.status.end_batch()
        parts.status.clearMessage()
        parts.session.changed.emit()
        if job.cancelled:
            done, total = len(job.done), len(job.images)
            parts.notice.show_message(f"Text extraction cancelled after {done} of {total} images.")
