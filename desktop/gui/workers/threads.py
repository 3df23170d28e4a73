"""One QThread per long-lived worker QObject (the Buzz pattern), with a clean shutdown; and
one-off work in the global QThreadPool, its result sent back by a queued signal."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, QThread, QThreadPool, SignalInstance


def run_in_pool(work: Callable[[], object], done: SignalInstance) -> None:
    """Runs `work` in the global QThreadPool and emits its result by `done`, which reaches
    the signal's object on its own (the GUI) thread. `work` catches its failures and says
    them in its result: an exception would send nothing, and leave its caller waiting."""
    QThreadPool.globalInstance().start(_PoolTask(work, done))


class _PoolTask(QRunnable):
    def __init__(self, work: Callable[[], object], done: SignalInstance) -> None:
        super().__init__()
        self._work, self._done = work, done

    def run(self) -> None:
        result = self._work()
        with contextlib.suppress(RuntimeError):  # its window is gone: nobody waits for it
            self._done.emit(result)


class WorkerThread:
    """Moves `worker` to a new thread and starts it; its slots then run there when reached
    by queued signals."""

    def __init__(self, worker: QObject, name: str) -> None:
        self.worker = worker
        self.thread = QThread()
        self.thread.setObjectName(name)
        worker.moveToThread(self.thread)
        self.thread.finished.connect(worker.deleteLater)
        self.thread.start()

    def shutdown(self, timeout_ms: int) -> bool:
        """Ends the event loop once the running slot returns; True if the thread ended in
        time. Callers first make the running slot return soon (stop, cancel)."""
        self.thread.quit()
        return self.thread.wait(timeout_ms)

    @property
    def running(self) -> bool:
        return self.thread.isRunning()


class WorkerController(QObject):
    """The GUI-side handle of one worker on its own thread. Subclasses send it requests by
    queued signals; `shutdown` ends the thread and `release` then frees what the worker
    holds (models, services), so it goes now rather than at interpreter exit."""

    def __init__(self, worker: QObject, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        self._thread = WorkerThread(worker, name)

    @property  # shadows QObject.thread(): the controller lives on the GUI thread
    def thread(self) -> QThread:  # type: ignore[override]  # its worker's thread
        return self._thread.thread

    def prepare_shutdown(self) -> None:
        """Makes the worker's running slot return soon (stop, cancel); called by `shutdown`."""

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        self.prepare_shutdown()
        return self._thread.shutdown(timeout_ms)

    def release(self) -> None:
        """After the thread ended (shutdown)."""
        assert not self._thread.running
        release = getattr(self.worker, "release", None)
        if release is not None:
            release()
