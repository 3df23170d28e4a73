"""Settings > "Local API": the OpenAI-compatible server over the app's own warm engine and OCR.

The model stays owned by the EngineWorker's thread. API chat requests wait in the core's
`JobQueue`; the GUI thread hands one at a time to `_Pump`, a QObject living on the engine's
thread, only while no question of the user's is queued or being answered (`controller.busy`),
and asks again when one finishes. The pump checks `busy` once more when its slot runs, so a
question sent in between still goes first: API requests wait behind the user, never in front.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot

from desktop.core.api.jobs import JobQueue, run_next
from desktop.core.api.routes import ApiBackend
from desktop.core.api.security import load_or_create_token
from desktop.core.api.server import ApiServer, ApiSettings, ApiStartError

if TYPE_CHECKING:
    from desktop.core.ocr import OcrEngine
    from desktop.gui.worker import EngineController

logger = logging.getLogger(__name__)


class _Pump(QObject):
    """On the engine's thread: runs one API job there, between the worker's own slots."""

    ran = Signal(bool)  # True: a job ran; False: the user's question came first, or none waited

    def __init__(self, controller: EngineController, queue: JobQueue) -> None:
        super().__init__()
        self._controller = controller
        self._queue = queue

    @Slot()
    def run_one(self) -> None:
        if self._controller.busy:  # a question was sent since this was asked for: it goes first
            self.ran.emit(False)
            return
        # The worker's engine, read on the worker's own thread (None while none is loaded).
        engine = getattr(self._controller.worker, "_engine", None)
        self.ran.emit(run_next(self._queue, engine))


class LocalApi(QObject):
    """Starts and stops the server; lives on the GUI thread."""

    _pump_requested = Signal()
    _job_put = Signal()  # from the server's thread: a job waits

    def __init__(
        self,
        controller: EngineController,
        ocr: Callable[[], OcrEngine],
        token_file: Path,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._ocr = ocr
        self.token_file = token_file
        self._server: ApiServer | None = None
        self._pump: _Pump | None = None
        self._in_flight = False
        controller.worker.finished.connect(self._schedule)  # a question ended: the API's turn
        self._job_put.connect(self._schedule, Qt.ConnectionType.QueuedConnection)

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.running

    @property
    def server(self) -> ApiServer | None:
        return self._server

    def token(self) -> str:
        """The token clients send (created on first use, 0600 in the data folder)."""
        return load_or_create_token(self.token_file)

    def start(self, settings: ApiSettings | None = None) -> str | None:
        """Starts the server; None, or the sentence saying why it could not."""
        if self.running:
            return None
        queue = JobQueue((settings or ApiSettings()).max_waiting, on_put=self._job_put.emit)
        self._pump = _Pump(self._controller, queue)
        self._pump.moveToThread(self._controller.thread)
        self._pump_requested.connect(self._pump.run_one)
        self._pump.ran.connect(self._on_ran)
        backend = ApiBackend(queue, self._model_name, self._ocr)
        try:
            self._server = ApiServer(backend, self.token(), settings)
            self._server.start()
        except (ApiStartError, OSError) as exc:
            self._server = None
            self._drop_pump()
            return str(exc)
        return None

    def stop(self) -> None:
        """Refuses what waits (503), ends an API answer under way at its next token, closes
        the port; the user's own questions are untouched. Safe to call twice."""
        if self._server is not None:
            self._server.stop()
            self._server = None
        self._drop_pump()

    def _drop_pump(self) -> None:
        if self._pump is not None:
            self._pump_requested.disconnect(self._pump.run_one)
            self._pump.deleteLater()  # on its own thread, after a slot it may be running
            self._pump = None
        self._in_flight = False

    def _model_name(self) -> str | None:
        """The loaded model's name (any thread: the engine's info is fixed once loaded)."""
        engine = getattr(self._controller.worker, "_engine", None)
        return engine.info.name if engine is not None else None

    def _schedule(self, *_args: object) -> None:  # also worker.finished's AskResult
        if self._pump is None or self._in_flight or self._controller.busy:
            return
        if self._server is None or self._server.backend.jobs.waiting == 0:
            return
        self._in_flight = True
        self._pump_requested.emit()

    @Slot(bool)
    def _on_ran(self, ran: bool) -> None:
        self._in_flight = False
        if ran:
            self._schedule()
