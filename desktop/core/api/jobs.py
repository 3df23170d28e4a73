"""How API requests reach the model: a bounded queue that the engine's one owner thread empties.

The model is owned by one thread (the app's EngineWorker, or serve's `EngineThread`): its
KV state, tokenizer and compiled models are never touched by two threads, and the owner's one
`ConversationService` knows what the engine holds. The HTTP server only puts jobs here and
waits for their results; the owner runs one through its service whenever it has nothing of
its own to do, so API requests wait behind the user's questions, never in front of them.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from desktop.core.conversation import ConversationService

if TYPE_CHECKING:
    from desktop.core.engine import VLMEngine


class QueueFull(Exception):
    """More requests wait than the queue takes (the API answers 429)."""


class QueueClosed(Exception):
    """The server is stopping; no job is taken any more."""


@dataclass
class EngineJob:
    """Work for the owner thread: `run(service)`, the owner's conversation service (its
    engine None while no model is loaded)."""

    run: Callable[[ConversationService], None]
    cancel: threading.Event = field(default_factory=threading.Event)
    # Called on the owner thread instead of `run` when the job was cancelled while waiting.
    on_skip: Callable[[], None] | None = None
    # Set once the owner is done with the job and has let go of its request (its images):
    # the server gives large images' memory back after that, not merely after the reply.
    finished: threading.Event = field(default_factory=threading.Event)

    def execute(self, service: ConversationService) -> None:
        """Runs the job on the owner thread, then drops `run` (the request it carries)
        before `finished` is set."""
        run, self.run = self.run, _spent
        try:
            run(service)
        finally:
            del run
            self.finished.set()


def _spent(service: ConversationService) -> None:
    raise RuntimeError("this job has run already")


class JobQueue:
    """First in, first out; at most `max_waiting` jobs waiting (the running one not counted).

    `on_put` is called (on the putting thread) after each put, so that an owner with an event
    loop of its own (Qt) can schedule a take; `take` also blocks for owners that are threads.
    """

    def __init__(self, max_waiting: int, on_put: Callable[[], None] | None = None) -> None:
        self.max_waiting = max_waiting
        self.on_put = on_put
        self._jobs: collections.deque[EngineJob] = collections.deque()
        self._ready = threading.Condition()
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def waiting(self) -> int:
        with self._ready:
            return len(self._jobs)

    def put(self, job: EngineJob) -> None:
        with self._ready:
            if self._closed:
                raise QueueClosed
            # Jobs whose clients gave up (timeout, disconnect) hold no place in the queue.
            gone = [j for j in self._jobs if j.cancel.is_set()]
            if gone:
                self._jobs = collections.deque(j for j in self._jobs if not j.cancel.is_set())
            full = len(self._jobs) >= self.max_waiting
            if not full:
                self._jobs.append(job)
                self._ready.notify()
        _skipped(gone)
        if full:
            raise QueueFull
        if self.on_put is not None:
            self.on_put()

    def take(self, timeout: float | None = 0) -> EngineJob | None:
        """The next job that was not cancelled while waiting (those are skipped: their
        `on_skip` runs), or None after `timeout` seconds (0: do not wait) or once closed."""
        while True:
            with self._ready:
                if not self._jobs and not self._closed and timeout != 0:
                    self._ready.wait(timeout)
                if self._closed or not self._jobs:
                    return None
                job = self._jobs.popleft()
            if not job.cancel.is_set():
                return job
            _skipped([job])

    def close(self) -> list[EngineJob]:
        """No more puts or takes; the waiting jobs are cancelled and returned (their owners
        answer them: the server is stopping)."""
        with self._ready:
            self._closed = True
            jobs = list(self._jobs)
            self._jobs.clear()
            self._ready.notify_all()
        for job in jobs:
            job.cancel.set()
        _skipped(jobs)
        return jobs


def _skipped(jobs: list[EngineJob]) -> None:
    for job in jobs:
        if job.on_skip is not None:
            job.on_skip()
        job.finished.set()


def run_next(queue: JobQueue, service: ConversationService, timeout: float | None = 0) -> bool:
    """Runs one job on the calling (owner) thread; False when there was none."""
    job = queue.take(timeout)
    if job is None:
        return False
    job.execute(service)
    return True


class EngineThread:
    """`desklens serve --api`'s owner of the model: one thread that runs the jobs in order."""

    def __init__(self, engine: VLMEngine, queue: JobQueue) -> None:
        self.engine = engine
        self.service = ConversationService(engine)
        self.queue = queue
        self._thread = threading.Thread(target=self._loop, name="desklens-api-engine", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Closes the queue, ends the answer under way at its next token, waits for the thread."""
        self.queue.close()
        self.engine.stop()
        self._thread.join(timeout)

    def _loop(self) -> None:
        while run_next(self.queue, self.service, timeout=None) or not self.queue.closed:
            pass
