"""A history write done beside the answer: off the path from Send to the first token.

Saving a question encodes its images as PNG and syncs the database twice (a new chat, the
message); done first, that waited in front of the model (issue 58). The service starts it on
its own thread as the answer starts and waits for it before it stores the answer, so the rows
keep their order. On Linux the thread runs at a lower priority than the engine's: on a
two-core laptop the encode takes the idle moments of the prefill instead of a core from it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable

logger = logging.getLogger(__name__)

# Niceness added to the writing thread (Linux applies setpriority to one thread by its id).
_LOWER_BY = 10


class BesideWrite:
    """Runs `write` once, on a thread of its own; `wait` returns when it has run (or runs it
    now when it was never started) and raises what it raised."""

    def __init__(self, write: Callable[[], None]) -> None:
        self._write = write
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._done = False

    def start(self) -> None:
        if self._thread is None and not self._done:
            self._thread = threading.Thread(target=self._run, name="desklens-history-write")
            self._thread.start()

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
        elif not self._done:
            self._done = True
            self._write()
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def _run(self) -> None:
        _lower_this_threads_priority()
        try:
            self._write()
        except BaseException as exc:  # handed to `wait`, on the caller's thread
            self._failure = exc
        finally:
            self._done = True


def _lower_this_threads_priority() -> None:
    # Elsewhere a thread id may be some process's id: only Linux reads it as this thread.
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + _LOWER_BY)
    except OSError as exc:
        logger.debug("the history write keeps its priority: %s", exc)
