"""Reading ahead: while the user types, the engine thread reads the attached images (and the
history of a reopened chat), so Send has only the question's own tokens left to feed.

The flow keeps one target: the open conversation and the composer's images. Whenever
something it depends on changes, a preparation that no longer fits is cancelled at once, from
this thread (the worker's slot is busy while one runs, so a queued signal would come too late),
and the new one is requested once the current event is done: a Send clears the composer and
queues its question in the same event, and a preparation of the emptied composer must not go
ahead of that question. Nothing is prepared while a question or a Local API request is
answered (the engine's thread is busy), while the fast OCR works (it has priority over both
CPU cores), without a model, with a model server's model (it reads the images when the
question comes), or with the setting off. An interrupted preparation loses nothing: what it
fed stays in the KV state and the next request (or the Send) continues from there.

What the engine holds is read from `EngineStatus.holds` (the worker's service says it with
each answer and preparation): a chat it holds needs no reading ahead. A Local API request is
answered in a KV lane of its own, so it leaves the chat held.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Slot

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import PrepareRequest
from desktop.gui.flows.asking import ChatParts
from desktop.gui.workers.engine_worker import EngineController, PrepareResult
from desktop.gui.workers.ocr_worker import OcrController

READY = "Ready"


@dataclass(frozen=True)
class _Target:
    conversation_id: int | None
    digests: tuple[str, ...]
    visual_tokens: int | None = None  # the images' own budget ("More detail"), if any

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
    ) -> None:
        super().__init__(parent)
        self._parts = parts
        self._controller = engine
        self._ocr = ocr
        self._generation_settings = generation_settings
        self._request: PrepareRequest | None = None  # the latest one asked of the worker
        self._target: _Target | None = None  # what it prepares (running, queued or done)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._request_target)
        engine.prepared.connect(self._on_prepared)
        # A model (re)load, a question or an API request under way or done, what it holds.
        engine.status_changed.connect(self.update)
        parts.composer.attachments_changed.connect(self.update)
        parts.session.opened.connect(self.update)
        ocr.jobs_changed.connect(self.update)

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
        parts, status = self._parts, self._controller.status
        if not (parts.settings().prepare_ahead and status.loaded):
            return None
        if status.server:  # a server reads the images when the question comes
            return None
        if status.busy or self._ocr.busy:
            return None
        images = parts.composer.attachments()
        conversation_id = parts.session.conversation_id
        answered = parts.session.transcript.has_answers()
        tokens = self._generation_settings().max_visual_tokens
        target = _Target(conversation_id, tuple(ref.digest for ref in images), tokens)
        if not images and (conversation_id == status.holds or not answered):
            # Nothing to read ahead: no earlier turns, or the state holds them (after this
            # flow's own preparation of them: it stays the target, and its "Ready" stays).
            return target if answered and target == self._target else None
        return target

    @Slot()
    def _request_target(self) -> None:
        wanted = self._wanted()
        if wanted == self._target:
            return  # already asked for (running, queued or done)
        self._cancel()
        if wanted is None:
            return
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
            self._parts.composer.set_hint(READY)
            return
        # Cancelled by someone else (a model load, a Stop): asked again at the next change.
        # An error or a skip keeps its target, so a failing image is not read over and over;
        # the Send reports the problem as usual.
        self._parts.composer.set_hint("")
        if status == "cancelled":
            self._request = self._target = None
