"""A child process's text output, read on a thread: a test waits for one line (the app's
"started", the OCR service's "ready") with a deadline, without polling, and a pipe that never
speaks cannot block it."""

from __future__ import annotations

import subprocess
import threading

APP_STARTED = "started (data folder"  # gui/app.py logs it once the window is up


class ChildLog:
    """Collects a child's output (stderr, or stdout with stderr merged into it) and notes
    when `marker` has come."""

    def __init__(self, process: subprocess.Popen[str], marker: str) -> None:
        assert process.stderr is not None or process.stdout is not None
        self._process = process
        self._stream = process.stderr if process.stderr is not None else process.stdout
        self._marker = marker
        self.lines: list[str] = []
        self.seen = False
        self._settled = threading.Event()  # the marker has come, or the output has ended
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._stream is not None
        for line in self._stream:
            self.lines.append(line)
            if not self.seen and self._marker in line:
                self.seen = True
                self._settled.set()
        self._settled.set()

    def wait(self, timeout_s: float) -> bool:
        """True once the marker has come; False if the output ended or time ran out first."""
        self._settled.wait(timeout_s)
        return self.seen

    def text(self) -> str:
        """Everything read so far; once the process has ended, everything it wrote."""
        if self._process.poll() is not None:
            self._reader.join(30)
        return "".join(self.lines)
