"""When Qt objects die: on the GUI thread, at a moment Qt chose, never under a running event.

Two ways a Python-held Qt object died at the wrong moment, and crashed the app at its next
answer once Settings had been open (issue 55):
- `QDialog.exec()` hands the dialog's ownership to Python (PySide6), though it stays a child
  of the window; the dialog's wrapper sits in reference cycles (its slots are its own bound
  methods), so only the cyclic garbage collector freed it — on whatever thread allocated
  next (the engine's, a pool's). Shiboken then deletes the C++ dialog "in the main thread"
  from a pending call, between any two bytecodes of whatever the GUI thread runs: a widget
  tree freed under a running slot (a segfault in `_on_token`), or a deadlock in a form
  label's buddy disconnect. `run_dialog` deletes a finished dialog on purpose
  (`deleteLater`) instead.
- The cyclic collector itself: `GuiCollector` turns its automatic runs off while a window
  lives and runs it on the GUI thread from a timer, between events, with the thresholds
  Python would use. Worker threads then never finalize a Qt wrapper found in a cycle.
"""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QDialog

from desktop.core.api import memory

# How often the GUI thread looks at the allocation counts: cheap (three integers), and
# frequent enough that cyclic garbage never piles up for long.
COLLECT_CHECK_MS = 250


def run_dialog(dialog: QDialog) -> int:
    """`dialog.exec()`, then the dialog is deleted by Qt on this (the GUI) thread at the next
    turn of the event loop; read what it holds before you return to the loop."""
    try:
        return dialog.exec()
    finally:
        dialog.deleteLater()


class GuiCollector(QObject):
    """Runs Python's cyclic garbage collector on the GUI thread only, while started.

    `request()` may be called from any thread (the local API gives memory back after a large
    image): the collection runs on the GUI thread and `request` returns once it has, or after
    `timeout_s` (the GUI thread may be waiting for that very thread, e.g. at shutdown)."""

    _requested = Signal()
    _running = 0  # collectors started and not stopped (a test may hold two windows)
    _was_enabled = True  # automatic collection before the first of them started

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(COLLECT_CHECK_MS)
        self._timer.timeout.connect(self.collect_due)
        self._requested.connect(self._collect_requested)  # queued from other threads
        self._done: list[threading.Event] = []
        self._lock = threading.Lock()
        self.collections = 0  # how many collections it ran (tests look)

    @property
    def active(self) -> bool:
        return self._timer.isActive()

    def start(self) -> None:
        if self.active:
            return
        if not GuiCollector._running:  # the first window's: automatic runs as they were
            GuiCollector._was_enabled = gc.isenabled()
        GuiCollector._running += 1
        gc.disable()
        self._timer.start()
        memory.collect_with(self.request)  # the local API's give-back after large images

    def stop(self) -> None:
        """Automatic collection as it was before `start`, after one last full collection
        here."""
        if not self.active:
            return
        self._timer.stop()
        GuiCollector._running -= 1
        gc.collect()
        if GuiCollector._running:  # another window's collector goes on
            return
        memory.collect_with(None)
        if GuiCollector._was_enabled:
            gc.enable()

    @Slot()
    def collect_due(self) -> None:
        """Collects the oldest generation whose allocation count passed its threshold, as
        the interpreter would have at that count."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        due = [g for g in range(3) if thresholds[g] and counts[g] >= thresholds[g]]
        if due:
            gc.collect(max(due))
            self.collections += 1

    def request(self, timeout_s: float = 5.0) -> bool:
        """A full collection on the GUI thread; True once it ran (False: timed out)."""
        if not self.active:
            gc.collect()
            return True
        done = threading.Event()
        with self._lock:
            self._done.append(done)
        self._requested.emit()
        return done.wait(timeout_s)

    @Slot()
    def _collect_requested(self) -> None:
        with self._lock:
            waiting, self._done = self._done, []
        if waiting:
            gc.collect()
            self.collections += 1
        for done in waiting:
            done.set()
