"""The desktop app as a child process: its stderr read on a thread, so a test waits for the
"started" line with a deadline instead of blocking on a pipe that may never speak."""

from __future__ import annotations

import subprocess
import threading

STARTED = "started (data folder"  # gui/app.py logs it once the window is up


class AppLog:
    """Collects a child's text output (stderr, or stdout with stderr merged into it)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None or process.stdout is not None
        self._process = process
        self._stream = process.stderr if process.stderr is not None else process.stdout
        self.lines: list[str] = []
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._stream is not None
        for line in self._stream:
            self.lines.append(line)
            if STARTED in line:
                self.started.set()

    def wait_started(self, timeout_s: float) -> bool:
        return self.started.wait(timeout_s)

    def text(self) -> str:
        """Everything read so far; once the process has ended, everything it wrote."""
        if self._process.poll() is not None:
            self._reader.join(30)
        return "".join(self.lines)
