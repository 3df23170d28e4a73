"""The inference worker: one QObject on its own QThread owns the VLM engine.

Requests arrive by queued signals and run one after another in arrival order (a question sent
while the model still loads simply waits its turn). A preparation (`PrepareRequest`) does the
work of the next question that does not depend on its words while the user types it. The
worker also writes the question and the answer to the history, so no SQLite commit or PNG
encoding happens on the GUI thread.
OpenVINO is imported here, in the worker thread, on the first load.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.chat import Answer, Conversation, GenerationSettings, Turn
from desktop.core.errors import describe
from desktop.core.history import HistoryError, HistoryStore
from desktop.core.history.handle import ChatHandle
from desktop.core.history.replay import rebuild_conversation
from desktop.core.images import ImageError
from desktop.core.manifest import ModelError
from desktop.core.question_context import grounded_prompt
from desktop.gui.image_ref import ImageRef
from desktop.gui.settings import EngineOptions
from desktop.gui.threads import WorkerController

if TYPE_CHECKING:
    from desktop.core.engine import Preparation, VLMEngine
    from desktop.core.ocr import OcrEngine

logger = logging.getLogger(__name__)

NO_MODEL = "No model is loaded yet. Set one up in the panel above, then ask again."


@dataclass
class AskRequest:
    chat: ChatHandle  # created in the store, if new, by the worker before it saves the question
    question: str
    images: list[ImageRef]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    user_message_id: int | None = None  # set on a retry: the question is already stored
    cancel: threading.Event = field(default_factory=threading.Event)
    hints: list[str] = field(default_factory=list)  # fast-OCR text of the images, for drafting
    # Regenerate / edit and resend: this stored message and every later one are dropped (in
    # the store and the engine's state) before the question is asked.
    rewind_from: int | None = None
    # Put before the question once, by the worker (the stored question is the whole prompt):
    ground: Callable[[], OcrEngine] | None = None  # the fast OCR of `images` ("Use the …")
    system: str = ""  # the system prompt of a new chat

    @property
    def conversation_id(self) -> int | None:
        return self.chat.id


@dataclass
class PrepareRequest:
    """Read `images` (and the conversation's history) before the question is sent."""

    conversation_id: int | None  # None: a new chat, no history yet
    images: list[ImageRef]
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    # Set from the GUI thread: the worker's slot is busy while a preparation runs, so a queued
    # signal would only arrive after it. Also marks a request superseded before it started.
    cancel: threading.Event = field(default_factory=threading.Event)


@dataclass
class PrepareResult:
    request: PrepareRequest
    preparation: Preparation | None  # None: not run (superseded before it started, no model)


@dataclass
class AskResult:
    request: AskRequest
    answer: Answer
    user_message_id: int | None = None
    answer_message_id: int | None = None  # the stored answer (role assistant) or error
    notes: list[str] = field(default_factory=list)  # e.g. older turns dropped to fit
    save_error: str | None = None


class EngineWorker(QObject):
    token = Signal(str)
    finished = Signal(object)  # AskResult
    prepared = Signal(object)  # PrepareResult, one per PrepareRequest
    error = Signal(str)  # the model could not be loaded
    state = Signal(str)  # "loading" | "ready" | "generating" | "error"
    loaded = Signal(object)  # ModelInfo
    devices = Signal(list)  # OpenVINO device names available on this machine

    def __init__(self, store: HistoryStore) -> None:
        super().__init__()
        self._store = store
        self._engine: VLMEngine | None = None
        self._problem = NO_MODEL
        self._conversation = Conversation()
        self._conversation_id: int | None = None
        self._engine_lock = threading.Lock()  # guards _engine for stop() from the GUI thread

    @property
    def engine(self) -> VLMEngine | None:
        """The loaded engine; use it on this worker's thread only (None while none is)."""
        return self._engine

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
        self._conversation_id = None  # a new engine holds no KV state: rebuild on next ask
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
            self.loaded.emit(engine.info)
            self.state.emit("ready")
        self.devices.emit(_available_devices())

    def release(self) -> None:
        """The thread has ended: drop the model, so its memory and OpenVINO's threads go now
        rather than at interpreter exit."""
        with self._engine_lock:
            self._engine = None
        self._conversation = Conversation()
        self._conversation_id = None

    @Slot(int)
    def forget(self, conversation_id: int) -> None:
        """The conversation was deleted: its id may be reused by a new one."""
        if self._conversation_id == conversation_id:
            self._conversation_id = None
            self._conversation = Conversation()

    @Slot(object)
    def ask(self, request: AskRequest) -> None:
        engine = self._engine
        if engine is None:  # no model, or it failed to load: nothing is stored, Retry can resend
            self.finished.emit(AskResult(request, Answer("", "error", error=self._problem)))
            return
        self.state.emit("generating")
        result = self._answer(engine, request)
        self.finished.emit(result)
        self.state.emit("ready")

    @Slot(object)
    def prepare(self, request: PrepareRequest) -> None:
        engine = self._engine
        if engine is None or request.cancel.is_set():  # a newer request or a Send came first
            self.prepared.emit(PrepareResult(request, None))
            return
        from desktop.core.engine import Preparation

        try:
            images = [ref.load() for ref in request.images]
        except ImageError as exc:  # the Send reports it the usual way
            self.prepared.emit(PrepareResult(request, Preparation("error", error=str(exc))))
            return
        if request.conversation_id is None:
            conversation = Conversation()  # a new chat's prompt; its id does not exist yet
        else:
            conversation = self._conversation_for(request.conversation_id)
        preparation = engine.prepare(conversation, images, request.settings, request.cancel)
        self.prepared.emit(PrepareResult(request, preparation))

    def _answer(self, engine: VLMEngine, request: AskRequest) -> AskResult:
        try:
            images = [ref.load() for ref in request.images]
        except ImageError as exc:
            return AskResult(request, Answer("", "error", error=str(exc)))
        if request.ground is not None or request.system:
            request.question = grounded_prompt(
                request.question, images, request.ground, request.system
            )
            request.ground, request.system = None, ""  # composed: a Retry sends it as it is
        result = AskResult(request, Answer("", "error"))
        conversation_id = self._resolve(result)
        if request.rewind_from is not None and conversation_id is not None:
            self._rewind(result, conversation_id, request.rewind_from)
        conversation = self._conversation_for(conversation_id)
        result.user_message_id = request.user_message_id or self._save(
            result, conversation_id, "user", request.question, images
        )
        last_turn = conversation.turns[-1] if conversation.turns else None
        notes_before = len(conversation.notes)

        def on_text(chunk: str) -> None:
            if request.cancel.is_set():  # a Stop that came before the engine cleared its flag
                engine.stop()
            self.token.emit(chunk)

        if request.cancel.is_set():
            result.answer = Answer("", "stopped")
        else:
            result.answer = engine.ask(
                conversation, request.question, images, request.settings, on_text, request.hints
            )
        result.notes = conversation.notes[notes_before:]
        turn = conversation.turns[-1] if conversation.turns else None
        self._store_answer(result, conversation_id, turn if turn is not last_turn else None)
        return result

    def _resolve(self, result: AskResult) -> int | None:
        """The chat's id (a new chat is created now); None if the store cannot create it:
        the question is still answered, only the history misses it."""
        try:
            return result.request.chat.resolve(self._store)
        except HistoryError as exc:
            result.save_error = str(exc)
            return None

    def _rewind(self, result: AskResult, conversation_id: int, message_id: int) -> None:
        try:
            self._store.delete_messages_from(conversation_id, message_id)
        except HistoryError as exc:
            result.save_error = str(exc)
        # Replayed from the store: the kept turns with the ids they were answered as, so the
        # engine's KV prefix still matches up to the question and only that is fed again.
        self._conversation_id = None

    def _conversation_for(self, conversation_id: int | None) -> Conversation:
        if conversation_id is None:
            self._conversation_id = None
            self._conversation = Conversation()
        elif self._conversation_id != conversation_id:
            try:
                messages = self._store.messages(conversation_id)
            except HistoryError as exc:
                logger.warning("could not replay conversation %s: %s", conversation_id, exc)
                messages = []
            self._conversation = rebuild_conversation(messages, self._store.load_image)
            self._conversation_id = conversation_id
        return self._conversation

    def _store_answer(
        self, result: AskResult, conversation_id: int | None, turn: Turn | None
    ) -> None:
        answer = result.answer
        if answer.ok:
            result.answer_message_id = self._save(
                result,
                conversation_id,
                "assistant",
                answer.text,
                answer_ids=turn.answer_ids if turn is not None else [],
                stats=answer.stats.to_dict(),
                stopped=answer.finish_reason == "stopped",
            )
        else:
            result.answer_message_id = self._save(
                result, conversation_id, "error", answer.error or ""
            )
        for note in result.notes:
            self._save(result, conversation_id, "note", note)

    def _save(
        self,
        result: AskResult,
        conversation_id: int | None,
        role: str,
        text: str,
        *args: object,
        **kwargs: object,
    ) -> int | None:
        if conversation_id is None:  # the chat could not be created: save_error says why
            return None
        try:
            return self._store.add_message(conversation_id, role, text, *args, **kwargs).id
        except HistoryError as exc:  # the answer is still shown; only the history misses it
            result.save_error = str(exc)
            return None

    def _fail(self, message: str) -> None:
        self._problem = message
        self.error.emit(message)
        self.state.emit("error")


def _available_devices() -> list[str]:
    try:
        import openvino as ov

        return list(ov.Core().available_devices)
    except Exception:  # no runtime at all: the load error already said why
        return ["CPU"]


class EngineController(WorkerController):
    """GUI-side handle: sends requests to the worker thread and relays its signals."""

    _load_requested = Signal(str, object)
    _ask_requested = Signal(object)
    _prepare_requested = Signal(object)
    _forget_requested = Signal(int)

    def __init__(self, store: HistoryStore, parent: QObject | None = None) -> None:
        super().__init__(EngineWorker(store), "desklens-engine", parent)
        self._load_requested.connect(self.worker.load)
        self._ask_requested.connect(self.worker.ask)
        self._prepare_requested.connect(self.worker.prepare)
        self._forget_requested.connect(self.worker.forget)
        self.worker.finished.connect(self._on_finished)
        self.worker.loaded.connect(lambda _info: self._set_loaded(True))
        self.worker.error.connect(lambda _message: self._set_loaded(False))
        self._pending: list[AskRequest] = []
        self._preparation: PrepareRequest | None = None  # the latest; older ones are cancelled
        self._closed = False
        self.model_loaded = False

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
        self._pending.append(request)
        self._ask_requested.emit(request)

    def prepare(self, request: PrepareRequest) -> None:
        """Supersedes the previous preparation (running or queued) with `request`."""
        self.cancel_preparation()
        if self._closed:
            return
        self._preparation = request
        self._prepare_requested.emit(request)

    def cancel_preparation(self) -> None:
        """Any running or queued preparation ends at its next prefill chunk (or never starts)."""
        if self._preparation is not None:
            self._preparation.cancel.set()
            self._preparation = None

    def forget(self, conversation_id: int) -> None:
        self._forget_requested.emit(conversation_id)

    def stop(self) -> None:
        """Stops every queued and running request (the running one keeps its partial text)."""
        for request in self._pending:
            request.cancel.set()
        self.cancel_preparation()
        self.worker.stop_engine()

    def prepare_shutdown(self) -> None:
        self._closed = True  # no new preparation after this
        self.stop()

    def _set_loaded(self, loaded: bool) -> None:
        self.model_loaded = loaded

    @Slot(object)
    def _on_finished(self, result: AskResult) -> None:
        self._pending = [r for r in self._pending if r is not result.request]
