"""Settings > "Local API": the OpenAI-compatible server over the app's own warm engine and OCR.

Off by default; the switch and the token are shown in Settings (`LocalApiRow`), and closing
the window stops the server before the engine's thread ends.

The model stays owned by the EngineWorker's thread. API chat requests wait in the core's
`JobQueue`; the GUI thread hands one at a time to `_Pump`, a QObject living on the engine's
thread, only while no question of the user's is queued or being answered (`controller.busy`),
and asks again when one finishes. The pump checks `busy` once more when its slot runs, so a
question sent in between still goes first: API requests wait behind the user, never in front.
It serves this computer's model only: while the window uses a model server, requests are
answered as with no model loaded, never relayed to that server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from desktop.core.api import TOKEN_FILE
from desktop.core.api.jobs import JobQueue, run_next
from desktop.core.api.tokens import new_token, read_token, write_token
from desktop.gui.widgets.basics import push_button

if TYPE_CHECKING:  # the server's stack (Starlette, uvicorn) loads only when it starts
    from desktop.core.api.server import ApiServer, ApiSettings
    from desktop.core.ocr import OcrEngine
    from desktop.gui.settings import AppSettings
    from desktop.gui.workers.engine_worker import EngineController
    from desktop.gui.workers.ocr_worker import OcrController
    from desktop.gui.workers.storage_worker import StorageController

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
        # This computer's engine, read on the worker's own thread: None while none is loaded,
        # or while a server's model answers the window (then the job says no model is loaded).
        engine = self._controller.local_engine
        self.ran.emit(run_next(self._queue, engine))


class LocalApi(QObject):
    """Starts and stops the server; lives on the GUI thread."""

    _pump_requested = Signal()
    _job_put = Signal()  # from the server's thread: a job waits
    running_changed = Signal(str)  # the server's URL, or "" once it stopped
    busy_changed = Signal(bool)  # an API request is handed to the engine's thread, or none
    # An API request ran on the engine: its KV state no longer holds the user's chat, so the
    # next question would read the chat again (the window reads it back ahead of time).
    engine_used = Signal()

    def __init__(
        self,
        controller: EngineController,
        ocr: Callable[[], OcrEngine],
        token_file: Path,
        write: Callable[[Callable[[], object]], object],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._controller = controller
        self._ocr = ocr
        self.token_file = token_file
        self._write = write  # runs a file write off the GUI thread
        self._token: str | None = None
        self._server: ApiServer | None = None
        self._pump: _Pump | None = None
        self._in_flight = False
        self.problem: str | None = None  # why the last start failed (shown in Settings)
        controller.finished.connect(self._schedule)  # a question ended: the API's turn
        self._job_put.connect(self._schedule, Qt.ConnectionType.QueuedConnection)

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.running

    @property
    def server(self) -> ApiServer | None:
        return self._server

    def token(self) -> str:
        """The token clients send: read from the data folder, or made now and written there
        (0600) on the storage thread, since the GUI thread writes no file."""
        if self._token is None:
            token = read_token(self.token_file)
            if token is None:
                token, path = new_token(), self.token_file
                self._write(lambda: write_token(path, token))
            self._token = token
        return self._token

    def start(self, settings: ApiSettings | None = None) -> str | None:
        """Starts the server; None, or the sentence saying why it could not."""
        from desktop.core.api.routes import ApiBackend
        from desktop.core.api.server import ApiServer, ApiSettings, ApiStartError

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
        self.running_changed.emit(self._server.url)
        return None

    @property
    def busy(self) -> bool:
        """An API request is handed to the engine's thread (waiting there, or running)."""
        return self._in_flight

    def apply(self, settings: AppSettings) -> None:
        """Runs the server as the settings say (on their port); a start that fails is logged
        and kept in `problem`."""
        if not settings.local_api:
            self.stop()
            return
        if (
            self.running
            and self._server is not None
            and self._server.port == settings.local_api_port
        ):
            return
        self.stop()
        from desktop.core.api.server import ApiSettings

        self.problem = self.start(ApiSettings(port=settings.local_api_port))
        if self.problem:
            logger.warning("local API not started: %s", self.problem)

    def stop(self) -> None:
        """Refuses what waits (503), ends an API answer under way at its next token, closes
        the port; the user's own questions are untouched. Safe to call twice."""
        if self._server is not None:
            self._server.stop()
            self._server = None
            self.running_changed.emit("")
        self._drop_pump()

    def _drop_pump(self) -> None:
        if self._pump is not None:
            self._pump_requested.disconnect(self._pump.run_one)
            self._pump.deleteLater()  # on its own thread, after a slot it may be running
            self._pump = None
        self._set_in_flight(False)

    def _set_in_flight(self, in_flight: bool) -> None:
        if in_flight != self._in_flight:
            self._in_flight = in_flight
            self.busy_changed.emit(in_flight)

    def _model_name(self) -> str | None:
        """This computer's loaded model's name, None while a server's model answers the
        window (any thread: the engine's info is fixed once loaded)."""
        engine = self._controller.local_engine
        return engine.info.name if engine is not None else None

    def _schedule(self, *_args: object) -> None:  # also the finished AskResult
        if self._pump is None or self._in_flight or self._controller.busy:
            return
        if self._server is None or self._server.backend.jobs.waiting == 0:
            return
        self._set_in_flight(True)
        self._pump_requested.emit()

    @Slot(bool)
    def _on_ran(self, ran: bool) -> None:
        self._in_flight = False  # quietly: the next waiting request may follow at once
        if ran:
            self.engine_used.emit()  # first: who hears busy_changed knows the state went
            self._schedule()
        if not self._in_flight:
            self.busy_changed.emit(False)


def window_local_api(
    engine: EngineController,
    ocr: OcrController,
    storage: StorageController,
    data_dir: Path,
    parent: QObject,
) -> LocalApi:
    """The window's server: its engine, its OCR worker's warm engine (thread-safe: it locks
    itself), the token in its data folder, written by the storage thread."""
    return LocalApi(engine, ocr.ocr_engine, data_dir / TOKEN_FILE, storage.submit, parent)


class LocalApiRow(QWidget):
    """Settings' "Local API" row: the switch, where it listens, and the token to copy."""

    def __init__(self, settings: AppSettings, api: LocalApi | None) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.check = QCheckBox(
            f"Serve an OpenAI-compatible API on this computer (port {settings.local_api_port})"
        )
        self.check.setAccessibleName("Local API")
        self.check.setToolTip(
            "Scripts and apps on this computer can ask this computer's model (never a model "
            "server's) and the fast OCR at "
            f"http://127.0.0.1:{settings.local_api_port}/v1 with the token below; web pages "
            "and other computers cannot."
        )
        self.check.setChecked(settings.local_api)
        layout.addWidget(self.check)
        token_row = QHBoxLayout()
        self.token_edit = QLineEdit()
        self.token_edit.setReadOnly(True)
        self.token_edit.setAccessibleName("API token")
        self.copy_button = push_button("Copy")
        self.copy_button.clicked.connect(self._copy)
        token_row.addWidget(self.token_edit, 1)
        token_row.addWidget(self.copy_button)
        layout.addLayout(token_row)
        self.status = QLabel(_status_text(api))
        self.status.setObjectName("muted")
        layout.addWidget(self.status)
        self._api = api
        self.check.toggled.connect(self._show_token)
        self._show_token(settings.local_api)

    @property
    def enabled(self) -> bool:
        return self.check.isChecked()

    def _show_token(self, on: bool) -> None:
        # The token file is created only once the user turns the API on.
        self.token_edit.setText(self._api.token() if on and self._api is not None else "")
        self.token_edit.setEnabled(on)
        self.copy_button.setEnabled(on)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.token_edit.text())


def _status_text(api: LocalApi | None) -> str:
    if api is None:
        return ""
    if api.problem:
        return f"Not running: {api.problem}"
    return f"Running at {api.server.url}" if api.server is not None and api.running else "Off"
