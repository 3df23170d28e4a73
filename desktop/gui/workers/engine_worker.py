"""The inference worker: one QObject on its own QThread owns the engine (this computer's
`VLMEngine`, or a model server's `RemoteEngine`) and the conversation service
(desktop/core/conversation) that asks it.

Requests arrive by queued signals, each with its own cancellation event, and run one after
another in arrival order (a question sent while the model still loads simply waits its turn).
A preparation (`PrepareRequest`) does the work of the next question that does not depend on
its words while the user types it. The Local API's chat requests run here too, through the
same service (in its lane for given turns, so the window's chat stays in the engine's state),
whenever no question of the user's is queued. The service writes the question and the answer
to the history on this thread, so no SQLite commit or PNG encoding happens on the GUI thread.
The service is the one owner of what the engine holds; the controller folds its results into
one `EngineStatus` (engine_status.py) that the flows read.
OpenVINO is imported here, in the worker thread, on the first load; a server is connected to
here too (its address checked, its models listed), so a slow one never holds the window.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal, Slot

from desktop.core.conversation import AskRequest, AskResult, ConversationService, PrepareRequest
from desktop.core.conversation.engine_protocol import ModelInfo
from desktop.core.errors import describe
from desktop.core.history import HistoryStore
from desktop.core.manifest import ModelError
from desktop.core.remote.config import ServerConfig
from desktop.core.remote.errors import RemoteError
from desktop.gui.settings import EngineOptions
from desktop.gui.workers.engine_status import EngineStatus, LocalModel, ServerModel
from desktop.gui.workers.threads import WorkerController

if TYPE_CHECKING:
    from desktop.core.api.jobs import JobQueue
    from desktop.core.conversation import AnswerEngine
    from desktop.core.engine import Preparation

logger = logging.getLogger(__name__)

__all__ = [
    "AskRequest", "AskResult", "EngineController", "EngineStatus", "PrepareRequest",
    "PrepareResult",
]  # fmt: skip


@dataclass(frozen=True)
class PrepareResult:
    request: PrepareRequest
    preparation: Preparation | None  # None: not run (superseded before it started, no model)
    holds: int | None = None  # the stored chat the engine's state holds now (`service.holds`)


class EngineWorker(QObject):
    """Thread plumbing around the conversation service, which owns the ask use case."""

    token = Signal(str)
    finished = Signal(AskResult)
    prepared = Signal(PrepareResult)  # one per PrepareRequest
    error = Signal(str)  # the model could not be loaded
    state = Signal(str)  # "loading" | "ready" | "generating" | "error"
    loaded = Signal(ModelInfo)
    devices = Signal(list)  # OpenVINO device names available on this machine
    api_busy = Signal(bool)  # a Local API request started (True) or ended (False) here
    _next_job = Signal()  # queued to itself: the next API job, after what was sent meanwhile

    def __init__(self, store: HistoryStore) -> None:
        super().__init__()
        self._service = ConversationService(store=store)
        self._engine: AnswerEngine | None = None
        self._server: ServerConfig | None = None  # the server asked for, while it is
        self._engine_lock = threading.Lock()  # guards _engine for stop() from the GUI thread
        self._jobs: JobQueue | None = None  # the Local API's chat requests, while it runs
        # Questions sent to this thread whose slot has not started yet (the controller counts
        # them as it sends): while there are any, API jobs wait.
        self._asks_sent = 0
        self._asks_lock = threading.Lock()
        self._next_job.connect(self.take_api_job, Qt.ConnectionType.QueuedConnection)

    @property
    def engine(self) -> AnswerEngine | None:
        """The loaded engine; use it on this worker's thread only (None while none is)."""
        return self._engine

    @property
    def service(self) -> ConversationService:
        """The conversation service; use it on this worker's thread only."""
        return self._service

    def stop_engine(self) -> None:
        """Any thread: ends the current answer at its next token."""
        with self._engine_lock:
            engine = self._engine
        if engine is not None:
            engine.stop()

    @Slot(str, object)
    def load(self, folder: str, options: EngineOptions) -> None:
        self._server = None
        self._unload()
        try:
            from desktop.core.engine import EngineConfig, VLMEngine

            config = EngineConfig(
                device=options.device,
                max_visual_tokens=options.max_visual_tokens,
                skip_repeats=options.skip_repeats,
            )
            if options.measure_again:  # here: the GUI thread never writes to disk
                from desktop.core.engine import tuning

                tuning.forget(Path(folder), config)
            engine = VLMEngine.load(folder, config)
        except ModelError as exc:
            self._fail(str(exc))
        except Exception as exc:  # OpenVINO raises plain RuntimeErrors for device problems
            logger.exception("model load failed")
            self._fail(f"The model in {folder} could not be loaded: {describe(exc)}")
        else:
            self._use(engine)
        self.devices.emit(_available_devices())

    @Slot(object)
    def load_remote(self, config: ServerConfig) -> None:
        """A model server's model: its address checked, its models listed, the configured one
        (or its first) chosen. The OCR stays on this computer. A server that cannot be used
        now is tried again at the next question (it may be back by then)."""
        self._server = config
        self._unload()
        try:
            from desktop.core.remote.engine import RemoteEngine

            engine = RemoteEngine.connect(config)
        except RemoteError as exc:  # already one sentence, without the key
            self._fail(str(exc))
        except Exception as exc:
            logger.exception("connecting to %s failed", config.host)
            self._fail(f"The server at {config.host} could not be used: {describe(exc)}")
        else:
            self._use(engine)

    def _unload(self) -> None:
        self.state.emit("loading")
        with self._engine_lock:
            old, self._engine = self._engine, None  # its memory goes before the next loads
        self._service.set_engine(None)  # a new engine holds no KV state: replay on next ask
        close = getattr(old, "close", None)  # a server's client: its connections
        if close is not None:
            close()

    def _use(self, engine: AnswerEngine) -> None:
        with self._engine_lock:
            self._engine = engine
        self._service.set_engine(engine)
        self.loaded.emit(engine.info)
        self.state.emit("ready")

    def release(self) -> None:
        """The thread has ended: drop the model, so its memory and OpenVINO's threads go now
        rather than at interpreter exit (a server's client closes its connections)."""
        with self._engine_lock:
            old, self._engine = self._engine, None
        self._service.set_engine(None)
        close = getattr(old, "close", None)
        if close is not None:
            close()

    @Slot(int)
    def forget(self, conversation_id: int) -> None:
        """The conversation was deleted: its id may be reused by a new one."""
        self._service.forget(conversation_id)

    def ask_sent(self) -> None:
        """Any thread (the controller, as it sends a question): API jobs wait for it."""
        with self._asks_lock:
            self._asks_sent += 1

    @Slot(object, object)
    def ask(self, request: AskRequest, cancel: threading.Event) -> None:
        with self._asks_lock:
            self._asks_sent -= 1
        if self._engine is None and self._server is not None and not cancel.is_set():
            self.load_remote(self._server)  # down at its load: it may be back
        if self._engine is None:  # no model, or it failed to load: kept with its error
            self.finished.emit(self._service.ask(request, cancel))
        else:
            self.state.emit("generating")
            self.finished.emit(self._service.ask(request, cancel, self.token.emit))
            self.state.emit("ready")
        self.take_api_job()  # the API's turn, unless another question waits

    @Slot(object, object)
    def prepare(self, request: PrepareRequest, cancel: threading.Event) -> None:
        preparation = self._service.prepare(request, cancel)
        self.prepared.emit(PrepareResult(request, preparation, self._service.holds))

    @Slot(object)
    def serve(self, jobs: JobQueue | None) -> None:
        """The Local API's chat requests come from `jobs` from now on (None: it stopped)."""
        self._jobs = jobs
        self.take_api_job()

    @Slot()
    def take_api_job(self) -> None:
        """Runs one waiting API request through the service, unless a question of the user's
        was sent to this thread: it goes first, and its end takes the next request."""
        jobs = self._jobs
        with self._asks_lock:
            if jobs is None or self._asks_sent > 0:
                return
        job = jobs.take(0)
        if job is None:
            return
        self.api_busy.emit(True)
        try:
            job.execute(self._service)  # answers its client itself, errors included
        finally:
            self.api_busy.emit(False)
        self._next_job.emit()  # after whatever was sent meanwhile

    def _fail(self, message: str) -> None:
        self._service.set_engine(None, message)
        self.error.emit(message)
        self.state.emit("error")


def _available_devices() -> list[str]:
    try:
        import openvino as ov

        return list(ov.Core().available_devices)
    except Exception:  # no runtime at all: the load error already said why
        return ["CPU"]


class EngineController(WorkerController):
    """GUI-side handle: sends requests to the worker thread and relays its signals. It keeps
    each request's cancellation event, so Stop reaches queued and running requests at once,
    and the one `EngineStatus` of what the engine holds and does (`status`)."""

    worker: EngineWorker

    # The worker's signals, re-emitted on the GUI thread: flows connect to these, never to
    # the worker. `status` is updated before `finished`, `prepared`, `loaded` and `error`.
    token = Signal(str)
    finished = Signal(AskResult)
    prepared = Signal(PrepareResult)
    error = Signal(str)
    state = Signal(str)
    loaded = Signal(ModelInfo)
    devices = Signal(list)
    status_changed = Signal(EngineStatus)  # whenever it changes
    api_busy = Signal(bool)  # a Local API request started or ended (after `status.api`)

    _load_requested = Signal(str, EngineOptions)
    _load_remote_requested = Signal(ServerConfig)
    _ask_requested = Signal(AskRequest, threading.Event)
    _prepare_requested = Signal(PrepareRequest, threading.Event)
    _forget_requested = Signal(int)
    _serve_requested = Signal(object)
    _job_put = Signal()

    def __init__(self, store: HistoryStore, parent: QObject | None = None) -> None:
        super().__init__(EngineWorker(store), "desklens-engine", parent)
        worker = self.worker
        self._load_requested.connect(worker.load)
        self._load_remote_requested.connect(worker.load_remote)
        self._ask_requested.connect(worker.ask)
        self._prepare_requested.connect(worker.prepare)
        self._forget_requested.connect(worker.forget)
        self._serve_requested.connect(worker.serve)
        self._job_put.connect(worker.take_api_job)
        worker.finished.connect(self._on_finished)
        worker.prepared.connect(self._on_prepared)
        worker.loaded.connect(self._on_loaded)
        worker.error.connect(self._on_error)
        worker.api_busy.connect(self._on_api_busy)
        for name in ("token", "state", "devices"):
            getattr(worker, name).connect(getattr(self, name))
        self._pending: list[tuple[AskRequest, threading.Event]] = []
        # The latest preparation; older ones are cancelled.
        self._preparation: tuple[PrepareRequest, threading.Event] | None = None
        self._closed = False
        self.status = EngineStatus()

    def load(self, folder: str, options: EngineOptions) -> None:
        self._set_status(replace(self.status, source=LocalModel(folder), model=None, holds=None))
        self.cancel_preparation()  # the old engine's state is about to go
        self._load_requested.emit(folder, options)

    def load_remote(self, config: ServerConfig) -> None:
        """Uses the model of the server `config` names instead of this computer's."""
        self._set_status(replace(self.status, source=ServerModel(config), model=None, holds=None))
        self.cancel_preparation()
        self._load_remote_requested.emit(config)

    def ask(self, request: AskRequest) -> None:
        # The ask continues from whatever the preparation fed; it must not wait for the rest.
        self.cancel_preparation()
        cancel = threading.Event()
        self._pending.append((request, cancel))
        self._set_status(replace(self.status, asking=True))
        self.worker.ask_sent()  # before it is queued: an API job checking now waits for it
        self._ask_requested.emit(request, cancel)

    def prepare(self, request: PrepareRequest) -> None:
        """Supersedes the previous preparation (running or queued) with `request`."""
        self.cancel_preparation()
        if self._closed:
            return
        cancel = threading.Event()
        self._preparation = (request, cancel)
        self._prepare_requested.emit(request, cancel)

    def cancel_preparation(self) -> None:
        """Any running or queued preparation ends at its next prefill chunk (or never starts):
        set from the GUI thread, since the worker's slot is busy while one runs."""
        if self._preparation is not None:
            self._preparation[1].set()
            self._preparation = None

    def forget(self, conversation_id: int) -> None:
        if self.status.holds == conversation_id:
            self._set_status(replace(self.status, holds=None))
        self._forget_requested.emit(conversation_id)

    def serve(self, jobs: JobQueue | None) -> None:
        """The Local API's chat requests from `jobs` run on the worker, through its service,
        whenever no question of the user's waits (None: the API stopped)."""
        self._serve_requested.emit(jobs)

    def job_put(self) -> None:
        """Any thread (the API server's, after a put): the worker takes it when it may."""
        self._job_put.emit()

    def stop(self) -> None:
        """Stops every queued and running request (the running one keeps its partial text)."""
        for _request, cancel in self._pending:
            cancel.set()
        self.cancel_preparation()
        self.worker.stop_engine()

    def prepare_shutdown(self) -> None:
        self._closed = True  # no new preparation after this
        self.stop()

    def _set_status(self, status: EngineStatus) -> None:
        if status != self.status:
            self.status = status
            self.status_changed.emit(status)

    @Slot(object)
    def _on_loaded(self, info: ModelInfo) -> None:
        self._set_status(replace(self.status, model=info, holds=None))
        self.loaded.emit(info)

    @Slot(str)
    def _on_error(self, message: str) -> None:
        self._set_status(replace(self.status, model=None, holds=None))
        self.error.emit(message)

    @Slot(bool)
    def _on_api_busy(self, busy: bool) -> None:
        self._set_status(replace(self.status, api=busy))
        self.api_busy.emit(busy)

    @Slot(object)
    def _on_prepared(self, result: PrepareResult) -> None:
        self._set_status(replace(self.status, holds=result.holds))
        self.prepared.emit(result)

    @Slot(object)
    def _on_finished(self, result: AskResult) -> None:
        self._pending = [p for p in self._pending if p[0] is not result.request]
        self._set_status(replace(self.status, asking=bool(self._pending), holds=result.holds))
        self.finished.emit(result)
