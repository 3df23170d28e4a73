"""The storage thread: every write the GUI asks for (rename or delete a chat, create a new
one, delete a message, save the settings or an exported text) runs here, so the GUI thread
never waits for SQLite or the disk. The engine and OCR workers write their own results.

A task is a callable plus what to do with its result on the GUI thread; tasks run one after
another in the order asked. `shutdown` lets the queued ones finish first (a delete confirmed
as the window closes must still happen).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.errors import describe
from desktop.core.history import HistoryError
from desktop.core.history.records import reason
from desktop.gui.workers.threads import WorkerController

logger = logging.getLogger(__name__)


@dataclass
class StorageTask:
    run: Callable[[], object]
    on_done: Callable[[object], None] | None = None  # on the GUI thread, with run's result
    on_error: Callable[[str], None] | None = None  # on the GUI thread, with a sentence
    result: object = None
    error: str | None = None
    finished: threading.Event = field(default_factory=threading.Event)


class StorageWorker(QObject):
    done = Signal(StorageTask)

    @Slot(object)
    def run(self, task: StorageTask) -> None:
        try:
            task.result = task.run()
        except HistoryError as exc:
            task.error = str(exc)
        except OSError as exc:
            name = Path(exc.filename).name if exc.filename else "the file"
            task.error = f"Could not save {name}: {reason(exc)}."
        except Exception as exc:  # a bug must not end the thread that saves everything else
            logger.exception("storage task failed")
            task.error = f"Could not save: {describe(exc)}"
        task.finished.set()
        self.done.emit(task)


class StorageController(WorkerController):
    worker: StorageWorker
    problem = Signal(str)  # a task without its own on_error failed
    _run_requested = Signal(StorageTask)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(StorageWorker(), "desklens-storage", parent)
        self._run_requested.connect(self.worker.run)
        self.worker.done.connect(self._on_done)
        self._queued: list[StorageTask] = []

    def submit(
        self,
        run: Callable[[], object],
        on_done: Callable[[object], None] | None = None,
        on_error: Callable[[str], None] | None = None,
    ) -> StorageTask:
        task = StorageTask(run, on_done, on_error)
        self._queued.append(task)
        self._run_requested.emit(task)
        return task

    @property
    def busy(self) -> bool:
        """A task is queued, running, or its result has not yet reached the GUI thread."""
        return bool(self._queued)

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Waits for the queued writes (they are short), then ends the thread."""
        for task in self._queued:
            if not task.finished.wait(timeout_ms / 1000):
                break
        return super().shutdown(timeout_ms)

    @Slot(object)
    def _on_done(self, task: StorageTask) -> None:
        if task in self._queued:
            self._queued.remove(task)
        if task.error is not None:
            if task.on_error is not None:
                task.on_error(task.error)
            else:
                self.problem.emit(task.error)
        elif task.on_done is not None:
            task.on_done(task.result)
