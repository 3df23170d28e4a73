"""Settings > "Local API": the OpenAI-compatible server over the app's own warm engine and OCR.

Off by default; the switch and the token are shown in Settings (`LocalApiRow`), and closing
the window stops the server before the engine's thread ends.

The model stays owned by the EngineWorker's thread. API chat requests wait in the core's
`JobQueue`; the worker takes one at a time and runs it through its own conversation service
(`EngineController.serve`), only while no question of the user's was sent to it: API requests
wait behind the user, never in front. The service answers them in a KV lane of their own, so
the window's chat stays in the engine's state and its next question reads only itself. It
serves this computer's model only: while the window uses a model server, requests are
answered as with no model loaded, never relayed to that server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from desktop.core.api import TOKEN_FILE
from desktop.core.api.jobs import JobQueue
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


class LocalApi(QObject):
    """Starts and stops the server; lives on the GUI thread."""

    running_changed = Signal(str)  # the server's URL, or "" once it stopped
    busy_changed = Signal(bool)  # an API request is being answered on the engine, or none

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
        self.problem: str | None = None  # why the last start failed (shown in Settings)
        controller.api_busy.connect(self.busy_changed)

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
        queue = JobQueue((settings or ApiSettings()).max_waiting, on_put=self._controller.job_put)
        backend = ApiBackend(queue, self._model_name, self._ocr)
        try:
            self._server = ApiServer(backend, self.token(), settings)
            self._server.start()
        except (ApiStartError, OSError) as exc:
            self._server = None
            return str(exc)
        self._controller.serve(queue)
        self.running_changed.emit(self._server.url)
        return None

    @property
    def busy(self) -> bool:
        """An API request is being answered on the engine's thread."""
        return self._controller.status.api

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
            self._controller.serve(None)
            self.running_changed.emit("")

    def _model_name(self) -> str | None:
        """This computer's loaded model's name, None while a server's model answers the
        window (any thread: the status is replaced whole, never changed in place)."""
        model = self._controller.status.model  # a frozen value, replaced whole
        return model.name if model is not None and not model.server else None


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
