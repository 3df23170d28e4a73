"""A model-setup command (download, import, convert) run as a child process.

A separate process keeps the multi-gigabyte work off the app: the GUI thread only reads its
output lines. Stopping sends SIGINT first (the child then cleans up, or leaves a resumable
download) and kills it if it has not ended within a few seconds; on Windows it is killed at
once, which a download survives too (it resumes from its `.incomplete` file).
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

import desktop

SOURCE_ROOT = Path(desktop.__file__).resolve().parents[1]  # the checkout (or bundle) root
STOP_GRACE_MS = 5000
CLOSE_GRACE_MS = 3000  # closing the app waits this long for the child to clean up


CONSOLE_EXE = "desklens.exe" if sys.platform == "win32" else "desklens"  # installer/layout.py


def desklens_command() -> list[str]:
    """How to run `desklens ...` from here: the bundle's console executable (on Windows the
    app runs as the windowed desklensw.exe, which has no stdout to report through), or this
    Python with the package."""
    if getattr(sys, "frozen", False):
        console = Path(sys.executable).with_name(CONSOLE_EXE)
        return [str(console if console.is_file() else Path(sys.executable))]
    return [sys.executable, "-m", "desktop"]


def models_dir_problem(models_dir: Path) -> str | None:
    """Why the child could not create the models folder, found by looking only (the GUI
    thread does not write; the child creates the folder)."""
    probe = models_dir
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return (
            f"Cannot create the models folder {models_dir}: {probe} is a file, not a folder. "
            "Move it away or choose another data folder."
        )
    return None


class SetupProcess(QObject):
    line = Signal(str)  # each line the child prints (stdout and stderr merged)
    finished = Signal(int, bool)  # exit code, whether it crashed or was killed

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._process: QProcess | None = None
        self._partial = b""
        self.stop_requested = False  # the last child was asked to stop: its end is a cancel

    @property
    def running(self) -> bool:
        return self._process is not None

    def processId(self) -> int:  # noqa: N802  (QProcess's name: callers treat it as one)
        return self._process.processId() if self._process is not None else 0

    def start(self, command: list[str]) -> None:
        if self._process is not None:
            return
        process = QProcess(self)
        process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONUNBUFFERED", "1")
        process.setProcessEnvironment(env)
        if not getattr(sys, "frozen", False):
            process.setWorkingDirectory(str(SOURCE_ROOT))  # `-m desktop` from a checkout
        process.readyReadStandardOutput.connect(self._read)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self._process, self._partial, self.stop_requested = process, b"", False
        process.start(command[0], command[1:])

    def stop(self) -> None:
        """Asks the child to stop (SIGINT), killing it after STOP_GRACE_MS."""
        process = self._process
        if process is None:
            return
        # A child interrupted while Python starts exits 1 with a traceback, not 130: whoever
        # reads `finished` goes by this flag, not the exit code.
        self.stop_requested = True
        if process.state() == QProcess.ProcessState.Starting:
            process.waitForStarted(3000)  # only a pid can be signalled
        if os.name == "posix" and process.processId():
            os.kill(process.processId(), signal.SIGINT)
            QTimer.singleShot(STOP_GRACE_MS, self, lambda: self._kill_if(process))
        else:
            process.kill()

    def close(self) -> int:
        """The app is closing: interrupt, wait briefly, kill. Returns the child's pid."""
        process = self._process
        if process is None:
            return 0
        pid = process.processId()
        if os.name == "posix" and pid and process.state() == QProcess.ProcessState.Running:
            os.kill(pid, signal.SIGINT)
            process.waitForFinished(CLOSE_GRACE_MS)
        if process.state() != QProcess.ProcessState.NotRunning:
            process.kill()
            process.waitForFinished(3000)
        return pid

    def _kill_if(self, process: QProcess) -> None:
        if self._process is process and process.state() != QProcess.ProcessState.NotRunning:
            process.kill()

    def _read(self) -> None:
        if self._process is None:
            return
        data = self._partial + bytes(self._process.readAllStandardOutput().data())
        *lines, self._partial = data.split(b"\n")
        for raw in lines:
            self.line.emit(raw.decode(errors="replace").rstrip("\r"))

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._end(127, True)

    def _on_finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        self._read()
        if self._partial:
            self.line.emit(self._partial.decode(errors="replace"))
            self._partial = b""
        self._end(exit_code, exit_status == QProcess.ExitStatus.CrashExit)

    def _end(self, exit_code: int, crashed: bool) -> None:
        if self._process is None:
            return
        self._process.deleteLater()
        self._process = None
        self.finished.emit(exit_code, crashed)
