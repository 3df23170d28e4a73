"""SIGTERM, SIGHUP and SIGINT close the window the way the user would (and end `desklens
capture`'s overlay as Escape does).

A logout, `kill`, a closed terminal or Ctrl+C in it would otherwise end the process at once:
an answer being streamed and its words would be lost, and Ctrl+C would only surface later as a
KeyboardInterrupt traceback inside some slot. Qt's event loop holds the main thread in C++,
where Python's handlers cannot run, so the signal's number is written to a socket that Qt
watches (`signal.set_wakeup_fd`) and the window is closed from there. The Python handler
itself does nothing: it runs between any two bytecodes, even inside a write to stderr, where
logging again would raise "reentrant call" and the window would never close.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
from collections.abc import Callable
from types import FrameType

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier, QTimer
from PySide6.QtWidgets import QWidget

logger = logging.getLogger(__name__)

CLOSING_SIGNALS = (signal.SIGTERM, signal.SIGINT) + (
    (signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()
)


class CloseOnTermination(QObject):
    """Calls `close`, then ends the event loop, on a terminating signal. Installed once, on
    the main thread, by a process's entry (never by the tests' in-process windows, which
    share the test process's signals)."""

    def __init__(self, parent: QObject, close: Callable[[], object]) -> None:
        super().__init__(parent)
        self._close_first = close
        self._wake, self._wake_write = socket.socketpair()
        for end in (self._wake, self._wake_write):
            end.setblocking(False)
        signal.set_wakeup_fd(self._wake_write.fileno())
        self._notifier = QSocketNotifier(self._wake.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)
        for number in CLOSING_SIGNALS:
            signal.signal(number, self._on_signal)

    def _drain(self) -> None:
        """Runs on the event loop: reads the signals' numbers, then closes once."""
        numbers = b""
        try:
            while chunk := self._wake.recv(64):
                numbers += chunk
        except BlockingIOError:
            pass  # all read
        closing = [n for n in numbers if n in CLOSING_SIGNALS]
        if closing:
            logger.info("%s received: closing", signal.Signals(closing[0]).name)
            QTimer.singleShot(0, self._close)  # after this slot, from the event loop

    @staticmethod
    def _on_signal(_number: int, _frame: FrameType | None) -> None:
        """Nothing here (see the module's docstring): the wake-up socket carries the signal."""

    def _close(self) -> None:
        self._close_first()  # the window's close: stops the answer, keeps its words, joins
        QCoreApplication.quit()  # also ends a dialog's loop that would keep the app open


def close_on_termination(window: QWidget) -> CloseOnTermination | None:
    """Closes `window` on a terminating signal (POSIX only: Windows ends a GUI app by
    closing its window, which Qt already turns into a close event)."""
    return CloseOnTermination(window, window.close) if os.name == "posix" else None


def quit_on_termination(app: QCoreApplication) -> CloseOnTermination | None:
    """Ends `app`'s event loop on a terminating signal (a process without a main window)."""
    return CloseOnTermination(app, lambda: None) if os.name == "posix" else None
