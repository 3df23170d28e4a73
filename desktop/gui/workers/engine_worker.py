"""The inference worker: one QObject on its own QThread owns the VLM engine and the
conversation service (desktop/core/conversation) that asks it.

Requests arrive by queued signals, each with its own cancellation event, and run one after
another in arrival order (a question sent while the model still loads simply waits its turn).
A preparation (`PrepareRequest`) does the work of the next question that does not depend on
its words while the user types it. The service writes the question and the answer to the
history on this thread, so no SQLite commit or PNG encoding happens on the GUI thread.
OpenVINO is imported here, in the worker thread, on the first load.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.conversation import AskRequest, AskResult, ConversationService, PrepareRequest
from desktop.core.errors import describe
from desktop.core.history import HistoryStore
from desktop.core.manifest import ModelError
from desktop.gui.settings import EngineOptions
from desktop.gui.workers.threads import WorkerController

if TYPE_CHECKING:
    from desktop.core.engine import Preparation, VLMEngine

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
        self._engine: VLMEngine | None = None
        self._engine_lock = threading.Lock()  # guards _engine for stop() from the GUI thread

    @property
    def engine(self) -> VLMEngine | None:
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
        self.state.emit("loading")
        with self._engine_lock:
            self._engine = None  # release the old model's memory before compiling the new one
        self._service.set_engine(None)  # a new engine holds no KV state: replay on next ask
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
            with self._engine_lock:
                self._engine = engine
            self._service.set_engine(engine)
            self.loaded.emit(engine.info)
            self.state.emit("ready")
        self.devices.emit(_available_devices())

    def release(self) -> None:
        """The thread has ended: drop the model, so its memory and OpenVINO's threads go now
        rather than at interpreter exit."""
        with self._engine_lock:
            self._engine = None
        self._service.set_engine(None)

    @Slot(int)
    def forget(self, conversation_id: int) -> None:
        """The conversation was deleted: its id may be reused by a new one."""
        self._service.forget(conversation_id)

    @Slot(object, object)
    def ask(self, request: AskRequest, cancel: threading.Event) -> None:
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
    _ask_requested = Signal(object, object)
    _prepare_requested = Signal(object, object)
    _forget_requested = Signal(int)

    def __init__(self, store: HistoryStore, parent: QObject | None = None) -> None:
        super().__init__(EngineWorker(store), "desklens-engine", parent)
        worker = self.worker
        self._load_requested.connect(worker.load)
        self._ask_requested.connect(worker.ask)
        self._prepare_requested.connect(worker.prepare)
        self._forget_requested.connect(worker.forget)
        worker.finished.connect(self._on_finished)
        worker.loaded.connect(lambda _info: self._set_loaded(True))
        worker.error.connect(lambda _message: self._set_loaded(False))
        for name in ("token", "prepared", "error", "state", "loaded", "devices"):
            getattr(worker, name).connect(getattr(self, name))
        self._pending: list[tuple[AskRequest, threading.Event]] = []
        # The latest preparation; older ones are cancelled.
        self._preparation: tuple[PrepareRequest, threading.Event] | None = None
        self._closed = False
        self.model_loaded = False

    @property
    def engine(self) -> VLMEngine | None:
        """The loaded engine, for the local API's pump on the engine thread."""
        return self.worker.engine

    @property
    def busy(self) -> bool:
        """A question is queued or being answered."""
        return bool(self._pending)

    def load(self, folder: str, options: EngineOptions) -> None:
        self.model_loaded = False
        self.cancel_preparation()  # the old engine's state is about to go
        self._load_requested.emit(folder, options)

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

    def _set_loaded(self, loaded: bool) -> None:
        self.model_loaded = loaded

    @Slot(object)
    def _on_finished(self, result: AskResult) -> None:
        self._pending = [p for p in self._pending if p[0] is not result.request]
        self.finished.emit(result)
