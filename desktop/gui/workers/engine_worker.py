"""The inference worker: one QObject on its own QThread owns the engine (this computer's
`VLMEngine`, or a model server's `RemoteEngine`) and the conversation service
(desktop/core/conversation) that asks it.

Requests arrive by queued signals, each with its own cancellation event, and run one after
another in arrival order (a question sent while the model still loads simply waits its turn).
A preparation (`PrepareRequest`) does the work of the next question that does not depend on
its words while the user types it. The service writes the question and the answer to the
history on this thread, so no SQLite commit or PNG encoding happens on the GUI thread.
OpenVINO is imported here, in the worker thread, on the first load; a server is connected to
here too (its address checked, its models listed), so a slow one never holds the window.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.conversation import AskRequest, AskResult, ConversationService, PrepareRequest
from desktop.core.errors import describe
from desktop.core.history import HistoryStore
from desktop.core.manifest import ModelError
from desktop.core.remote.errors import RemoteError
from desktop.gui.settings import EngineOptions
from desktop.gui.workers.threads import WorkerController

if TYPE_CHECKING:
    from desktop.core.conversation import AnswerEngine
    from desktop.core.engine import ModelInfo, Preparation, VLMEngine
    from desktop.core.remote.config import ServerConfig

logger = logging.getLogger(__name__)

__all__ = ["AskRequest", "AskResult", "EngineController", "PrepareRequest", "PrepareResult"]


@dataclass(frozen=True)
class PrepareResult:
    request: PrepareRequest
    preparation: Preparation | None  # None: not run (superseded before it started, no model)


class EngineWorker(QObject):
    """Thread plumbing around the conversation service, which owns the ask use case."""

    token = Signal(str)
    finished = Signal(object)  # AskResult
    prepared = Signal(object)  # PrepareResult, one per PrepareRequest
    error = Signal(str)  # the model could not be loaded
    state = Signal(str)  # "loading" | "ready" | "generating" | "error"
    loaded = Signal(object)  # ModelInfo
    devices = Signal(list)  # OpenVINO device names available on this machine

    def __init__(self, store: HistoryStore) -> None:
        super().__init__()
        self._service = ConversationService(store=store)
        self._engine: AnswerEngine | None = None
        self._server: ServerConfig | None = None  # the server asked for, while it is
        self._engine_lock = threading.Lock()  # guards _engine for stop() from the GUI thread

    @property
    def engine(self) -> AnswerEngine | None:
        """The loaded engine; use it on this worker's thread only (None while none is)."""
        return self._engine

    @property
    def local_engine(self) -> VLMEngine | None:
        """This computer's loaded engine: None while none is, or while a server's answers."""
        engine = self._engine
        if engine is None or engine.info.server:
            return None
        return cast("VLMEngine", engine)

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

    @Slot(object, object)
    def ask(self, request: AskRequest, cancel: threading.Event) -> None:
        if self._engine is None and self._server is not None and not cancel.is_set():
            self.load_remote(self._server)  # down at its load: it may be back
        if self._engine is None:  # no model, or it failed to load: nothing is stored
            self.finished.emit(self._service.ask(request, cancel))
            return
        self.state.emit("generating")
        result = self._service.ask(request, cancel, self.token.emit)
        self.finished.emit(result)
        self.state.emit("ready")

    @Slot(object, object)
    def prepare(self, request: PrepareRequest, cancel: threading.Event) -> None:
        self.prepared.emit(PrepareResult(request, self._service.prepare(request, cancel)))

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
    each request's cancellation event, so Stop reaches queued and running requests at once."""

    worker: EngineWorker

    # The worker's signals, re-emitted on the GUI thread: flows connect to these, never to
    # the worker. `finished` comes after `busy` is updated.
    token = Signal(str)
    finished = Signal(object)  # AskResult
    prepared = Signal(object)  # PrepareResult
    error = Signal(str)
    state = Signal(str)
    loaded = Signal(object)  # ModelInfo
    devices = Signal(list)

    _load_requested = Signal(str, object)
    _load_remote_requested = Signal(object)
    _ask_requested = Signal(object, object)
    _prepare_requested = Signal(object, object)
    _forget_requested = Signal(int)

    def __init__(self, store: HistoryStore, parent: QObject | None = None) -> None:
        super().__init__(EngineWorker(store), "desklens-engine", parent)
        worker = self.worker
        self._load_requested.connect(worker.load)
        self._load_remote_requested.connect(worker.load_remote)
        self._ask_requested.connect(worker.ask)
        self._prepare_requested.connect(worker.prepare)
        self._forget_requested.connect(worker.forget)
        worker.finished.connect(self._on_finished)
        # Before the re-emitted signals: who hears `loaded` or `error` sees model_loaded.
        worker.loaded.connect(self._set_info)
        worker.error.connect(lambda _message: self._set_info(None))
        for name in ("token", "prepared", "error", "state", "loaded", "devices"):
            getattr(worker, name).connect(getattr(self, name))
        self._pending: list[tuple[AskRequest, threading.Event]] = []
        # The latest preparation; older ones are cancelled.
        self._preparation: tuple[PrepareRequest, threading.Event] | None = None
        self._closed = False
        self.info: ModelInfo | None = None  # the loaded model (None while loading, or none)

    @property
    def model_loaded(self) -> bool:
        return self.info is not None

    @property
    def server(self) -> str:
        """The host whose model is loaded ("" for this computer's model, or none)."""
        return self.info.server if self.info is not None else ""

    @property
    def local_engine(self) -> VLMEngine | None:
        """This computer's engine, for the local API's pump on the engine thread: None while
        a server's model is loaded (the Local API never relays requests to a server)."""
        return self.worker.local_engine

    @property
    def busy(self) -> bool:
        """A question is queued or being answered."""
        return bool(self._pending)

    def load(self, folder: str, options: EngineOptions) -> None:
        self.info = None
        self.cancel_preparation()  # the old engine's state is about to go
        self._load_requested.emit(folder, options)

    def load_remote(self, config: ServerConfig) -> None:
        """Uses the model of the server `config` names instead of this computer's."""
        self.info = None
        self.cancel_preparation()
        self._load_remote_requested.emit(config)

    def ask(self, request: AskRequest) -> None:
        # The ask continues from whatever the preparation fed; it must not wait for the rest.
        self.cancel_preparation()
        cancel = threading.Event()
        self._pending.append((request, cancel))
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
        self._forget_requested.emit(conversation_id)

    def stop(self) -> None:
        """Stops every queued and running request (the running one keeps its partial text)."""
        for _request, cancel in self._pending:
            cancel.set()
        self.cancel_preparation()
        self.worker.stop_engine()

    def prepare_shutdown(self) -> None:
        self._closed = True  # no new preparation after this
        self.stop()

    def _set_info(self, info: ModelInfo | None) -> None:
        self.info = info

    @Slot(object)
    def _on_finished(self, result: AskResult) -> None:
        self._pending = [p for p in self._pending if p[0] is not result.request]
        self.finished.emit(result)
