"""One QThread per long-lived worker QObject (the Buzz pattern), with a clean shutdown."""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread


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
