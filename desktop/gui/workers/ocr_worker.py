"""The fast-OCR worker: its own QThread, so extraction never waits for (or blocks) the VLM.

A job is one image or a batch; each image's text comes back as soon as it is read and is
stored in the history (role "ocr") by the worker. A batch can be cancelled between images.
Once warm, the engine also answers `desklens ocr FILE` from terminals and hotkeys while the
app is open (`desktop.core.ocr.service`), unless `desklens serve` already does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.errors import describe
from desktop.core.history import HistoryError, HistoryStore, Role
from desktop.core.history.handle import ChatHandle
from desktop.core.history.ocr_text import OcrText
from desktop.core.images import ImageError
from desktop.gui.image_ref import ImageRef
from desktop.gui.workers.threads import WorkerController

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine
    from desktop.core.ocr.models import OcrResult
    from desktop.core.ocr.service import OcrService

logger = logging.getLogger(__name__)


@dataclass
class OcrJob:
    chat: ChatHandle  # created in the store, if new, before the first text is saved
    images: list[ImageRef]
    cancel: threading.Event = field(default_factory=threading.Event)
    done: list[ImageRef] = field(default_factory=list)  # filled by the worker
    cancelled: bool = False  # set by the worker when the job ends

    @property
    def is_batch(self) -> bool:
        return len(self.images) > 1


@dataclass
class OcrOutcome:
    job: OcrJob
    image: ImageRef
    text: OcrText | None = None
    message_id: int | None = None
    error: str | None = None  # the image could not be read; the batch goes on


class OcrWorker(QObject):
    extracted = Signal(OcrOutcome)  # one per image
    progress = Signal(OcrJob, int, int)  # job, done, total
    job_finished = Signal(OcrJob)  # job.cancelled says whether it ended early
    ready = Signal()  # models compiled
    failed = Signal(str)  # the OCR models could not be loaded at all
    open_requested = Signal(list)  # file paths `desklens FILE` handed to this window
    model_offered = Signal(str)  # the folder a second `desklens gui --model DIR` gave
    capture_requested = Signal(str)  # `desklens capture`: its mode ("copy", "ask" or "")
    extract_requested = Signal(list)  # of the files handed next: their text into the chat

    def __init__(self, store: HistoryStore, data_dir: Path, threads: int | None = None) -> None:
        super().__init__()
        self._store = store
        self._data_dir = data_dir  # its service answers this data folder's command lines
        self._threads = threads
        self._engine: OcrEngine | None = None
        # Made once: the warm-up (this thread) and readers in other threads may ask first.
        self._engine_lock = threading.Lock()
        self._service: OcrService | None = None
        # The text that stands for a picture's pixels, by digest: a redacted copy's, with
        # its tags (flows/redacting.py); None: read the picture. Called on this thread.
        self.known_read: Callable[[str], OcrResult | None] = lambda _digest: None

    @Slot()
    def warm_up(self) -> None:
        try:
            self._ocr().warm_up()
        except Exception as exc:  # missing or broken OCR models: say so once, up front
            logger.exception("OCR warm-up failed")
            self.failed.emit(f"Text extraction is unavailable: {describe(exc)}")
        else:
            self._serve_command_line()
            self.ready.emit()

    def _serve_command_line(self) -> None:
        from desktop.core.ocr.batch import read_one
        from desktop.core.ocr.service import OcrService, ServiceError, default_endpoint

        service = OcrService(
            partial(read_one, self._ocr()),
            endpoint=default_endpoint(self._data_dir),
            on_open=self.open_requested.emit,
            on_model=self.model_offered.emit,
            on_capture=self.capture_requested.emit,
            on_extract=self.extract_requested.emit,
        )
        try:
            service.start()
        except ServiceError as exc:  # `desklens serve` or another window answers already
            logger.info("not answering `desklens ocr`: %s", exc)
            return
        self._service = service
        logger.info("answering the command line for the data folder %s", self._data_dir)

    @Slot(object)
    def run(self, job: OcrJob) -> None:
        total = len(job.images)
        for done, ref in enumerate(job.images):
            if job.cancel.is_set():
                break
            self.extracted.emit(self._extract(job, ref))
            job.done.append(ref)
            self.progress.emit(job, done + 1, total)
        job.cancelled = job.cancel.is_set() and len(job.done) < len(job.images)
        self.job_finished.emit(job)

    def _extract(self, job: OcrJob, ref: ImageRef) -> OcrOutcome:
        outcome = OcrOutcome(job, ref)
        try:
            image = ref.load()
            known = self.known_read(ref.digest)
            outcome.text = OcrText.from_result(known or self._ocr().extract(image))
        except ImageError as exc:
            outcome.error = str(exc)
            return outcome
        except Exception as exc:
            logger.exception("OCR failed on %s", ref.name)
            outcome.error = f"Could not read the text of {ref.name}: {describe(exc)}"
            return outcome
        try:
            outcome.message_id = self._store.add_message(
                job.chat.resolve(self._store),
                Role.OCR.value,
                outcome.text.text,
                [image],
                stats=outcome.text.stats(),
                ocr=outcome.text.stored(),
            ).id
        except HistoryError as exc:
            logger.warning("OCR result not saved: %s", exc)
        return outcome

    def stop_service(self) -> None:
        """Stop answering the command line; a request in progress is cut short (its client
        reads the file itself). Any thread; safe to call twice."""
        service, self._service = self._service, None
        if service is not None:
            service.stop()

    def release(self) -> None:
        """The thread has ended: stop the service (if the warm-up started it meanwhile),
        then drop the OCR models; their recognizer threads end with them."""
        self.stop_service()
        self._engine = None

    def ocr_engine(self) -> OcrEngine:
        """The warm OCR engine (made on first use); thread-safe, so the local API's server
        thread may read with it too."""
        return self._ocr()

    def _ocr(self) -> OcrEngine:
        with self._engine_lock:
            if self._engine is None:
                from desktop.core.ocr import OcrEngine

                self._engine = OcrEngine(threads=self._threads)
            return self._engine


class OcrController(WorkerController):
    """GUI-side handle of the OCR thread."""

    worker: OcrWorker

    # The worker's signals, re-emitted on the GUI thread: flows connect to these, never to
    # the worker. `job_finished` comes after `busy` is updated.
    extracted = Signal(OcrOutcome)
    progress = Signal(OcrJob, int, int)
    job_finished = Signal(OcrJob)
    failed = Signal(str)
    open_requested = Signal(list)
    model_offered = Signal(str)
    capture_requested = Signal(str)
    extract_requested = Signal(list)

    jobs_changed = Signal()  # a job was queued or finished: `busy` may have changed
    _run_requested = Signal(OcrJob)
    _warm_up_requested = Signal()

    def __init__(self, store: HistoryStore, data_dir: Path, parent: QObject | None = None) -> None:
        super().__init__(OcrWorker(store, data_dir), "desklens-ocr", parent)
        worker = self.worker
        self._run_requested.connect(worker.run)
        self._warm_up_requested.connect(worker.warm_up)
        worker.job_finished.connect(self._on_job_finished)
        # Signal to signal: the controller lives on the GUI thread, so Qt queues these to it
        # (open_requested and capture_requested come from the command-line service's thread).
        for name in (
            "extracted", "progress", "failed", "open_requested", "model_offered",
            "capture_requested", "extract_requested",
        ):  # fmt: skip
            getattr(worker, name).connect(getattr(self, name))
        self._jobs: list[OcrJob] = []

    @property
    def busy(self) -> bool:
        """An extraction is queued or running."""
        return bool(self._jobs)

    def warm_up(self) -> None:
        self._warm_up_requested.emit()

    def ocr_engine(self) -> OcrEngine:
        """The worker's warm OCR engine, for readers on other threads (grounded questions,
        the local API): it is thread-safe."""
        return self.worker.ocr_engine()

    def set_known_read(self, known: Callable[[str], OcrResult | None]) -> None:
        """What stands for a picture's pixels when its text is extracted, by digest."""
        self.worker.known_read = known

    def run(self, job: OcrJob) -> None:
        self._jobs.append(job)
        self._run_requested.emit(job)
        self.jobs_changed.emit()

    def cancel_all(self) -> None:
        for job in self._jobs:
            job.cancel.set()

    def prepare_shutdown(self) -> None:
        self.worker.stop_service()  # before the worker goes: the service emits its signals
        self.cancel_all()

    @Slot(object)
    def _on_job_finished(self, job: OcrJob) -> None:
        self._jobs = [j for j in self._jobs if j is not job]
        self.jobs_changed.emit()
        self.job_finished.emit(job)
