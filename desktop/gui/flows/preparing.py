"""Reading ahead: while the user types, the engine thread reads the attached images (and the
history of a reopened chat), so Send has only the question's own tokens left to feed.

The flow keeps one target: the open conversation and the composer's images. Whenever
something it depends on changes, a preparation that no longer fits is cancelled at once, from
this thread (the worker's slot is busy while one runs, so a queued signal would come too late),
and the new one is requested once the current event is done: a Send clears the composer and
queues its question in the same event, and a preparation of the emptied composer must not go
ahead of that question. Nothing is prepared while a question is queued or answered (it builds
the state itself), while the fast OCR works (it has priority over both CPU cores), without a
model, with a model server's model (it reads the images when the question comes), or with the
setting off. An interrupted preparation loses nothing: what it fed stays in
the KV state and the next request (or the Send) continues from there.

A Local API request runs on the same engine and replaces its KV state: nothing is prepared
while one is handed to the engine, and once it ran the open chat is read back ahead of time
("Reading the chat…"), so the user's next question does not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Slot

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskResult, PrepareRequest
from desktop.gui.flows.asking import ChatParts
from desktop.gui.workers.engine_worker import EngineController, PrepareResult
from desktop.gui.workers.ocr_worker import OcrController

if TYPE_CHECKING:
    from desktop.gui.workers.local_api import LocalApi

READY = "Ready"


@dataclass(frozen=True)
class _Target:
    conversation_id: int | None
    digests: tuple[str, ...]

    def reading_text(self) -> str:
        count = len(self.digests)
        if count == 0:
            return "Reading the chat…"
        return "Reading the image…" if count == 1 else f"Reading {count} images…"


class PrepareFlow(QObject):
    def __init__(
        self,
        parts: ChatParts,
        engine: EngineController,
        ocr: OcrController,
        generation_settings: Callable[[], GenerationSettings],
        parent: QObject,
        api: LocalApi | None = None,
    ) -> None:
        super().__init__(parent)
        self._api = api
        self._parts = parts
        self._controller = engine
        self._ocr = ocr
        self._generation_settings = generation_settings
        self._request: PrepareRequest | None = None  # the latest one asked of the worker
        self._target: _Target | None = None  # what it prepares (running, queued or done)
        # The conversation whose history the engine's KV state holds (after its answer or its
        # preparation): reopening it again, or removing the images, needs no new preparation.
        self._held: int | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._request_target)
        engine.prepared.connect(self._on_prepared)
        engine.finished.connect(self._on_answered)
        engine.state.connect(self._on_engine_state)
        engine.loaded.connect(self.update)
        parts.composer.attachments_changed.connect(self.update)
        parts.session.opened.connect(self.update)
        ocr.jobs_changed.connect(self.update)
        if api is not None:
            api.busy_changed.connect(self.update)
            api.engine_used.connect(self._on_engine_used)

    def holds(self, conversation_id: int | None) -> bool:
        """The engine's state holds this conversation's turns (a question to it reads only
        itself)."""
        return conversation_id is not None and conversation_id == self._held

    @Slot()
    def update(self, *_args) -> None:
        """Something the preparation depends on may have changed (images, chat, OCR, model,
        settings)."""
        if self._wanted() != self._target:
            self._cancel()
        self._timer.start()

    @property
    def settled(self) -> bool:
        """No decision waits for the event loop: what should be prepared has been asked for."""
        return not self._timer.isActive()

    # --- internals -----------------------------------------------------------------------

    def _wanted(self) -> _Target | None:
        parts = self._parts
        if not (parts.settings().prepare_ahead and self._controller.model_loaded):
            return None
        if self._controller.server:  # a server reads the images when the question comes
            return None
        if self._controller.busy or self._ocr.busy or (self._api is not None and self._api.busy):
            return None
        images = parts.composer.attachments()
        conversation_id = parts.session.conversation_id
        answered = parts.session.transcript.has_answers()
        if not images and (conversation_id == self._held or not answered):
            return None  # nothing to read ahead: no earlier turns, or the state holds them
        return _Target(conversation_id, tuple(ref.digest for ref in images))

    @Slot()
    def _request_target(self) -> None:
        wanted = self._wanted()
        if wanted == self._target:
            return  # already asked for (running, queued or done)
        self._cancel()
        if wanted is None:
            return
        if wanted.conversation_id != self._held:
            self._held = None  # the preparation replaces what the state holds
        images = self._parts.composer.attachments()
        request = PrepareRequest(
            tuple(images), self._generation_settings(), conversation_id=wanted.conversation_id
        )
        self._request, self._target = request, wanted
        self._parts.composer.set_hint(wanted.reading_text())
        self._controller.prepare(request)

    def _cancel(self) -> None:
        if self._request is not None:
            self._controller.cancel_preparation()  # the latest asked of the engine is this one
        self._request = self._target = None
        self._parts.composer.set_hint("")

    @Slot(object)
    def _on_prepared(self, result: PrepareResult) -> None:
        if result.request is not self._request:
            return  # superseded meanwhile
        preparation = result.preparation
        status = preparation.status if preparation is not None else "skipped"
        if status == "ready":
            self._held = result.request.conversation_id
            self._parts.composer.set_hint(READY)
            return
        # Cancelled by someone else (a model load, a Stop): asked again at the next change.
        # An error or a skip keeps its target, so a failing image is not read over and over;
        # the Send reports the problem as usual.
        self._parts.composer.set_hint("")
        if status == "cancelled":
            self._request = self._target = None

    @Slot(object)
    def _on_answered(self, result: AskResult) -> None:
        # An answered (or stopped) question leaves its conversation in the state; an error
        # resets the engine.
        self._held = result.request.conversation_id if result.answer.ok else None
        self.update()

    @Slot()
    def _on_engine_used(self) -> None:
        # What was held or prepared went with the API's request: read it again.
        self._held = None
        self._cancel()
        self.update()

    @Slot(str)
    def _on_engine_state(self, state: str) -> None:
        # A new engine holds nothing, and what was prepared went with the old one (the
        # controller cancelled it). Not on `loaded`: the window's own slot for it runs first,
        # in an event of its own, and a request made in between is for the new engine.
        if state == "loading":
            self._held = None
            self._cancel()
