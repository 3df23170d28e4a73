"""Download the ready INT8 model: one button, progress with bytes, speed and time left,
Pause/Resume and Cancel. The work is `desklens models --download` in a child process
(SetupProcess); this widget only reads its JSON progress lines and never touches the disk."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QProgressBar, QVBoxLayout, QWidget

from desktop.core.exit_codes import INTERRUPTED
from desktop.core.model_setup.download import DEFAULT_REPO, target_name
from desktop.core.model_setup.progress import Progress, describe
from desktop.gui.widgets.basics import push_button, text_label
from desktop.gui.workers.setup_process import SetupProcess, desklens_command, models_dir_problem

BAR_STEPS = 1000
# After a failure: the failures' sentences end "… and Download again" (hub_errors.py).
AGAIN = "Download again"


def log_sentence(line: str) -> str | None:
    """A line of `desklens models --progress json` as the Details log shows it: its sentence
    (a step, the error, where the model went); None for byte progress, which the bar shows.
    Lines that are not events (a library's own messages) stay as they are."""
    try:
        event = json.loads(line)
    except ValueError:
        return line
    if not isinstance(event, dict) or "event" not in event:
        return line
    kind, text = event.get("event"), str(event.get("text") or "")
    if kind == "progress":
        return None
    if kind == "error":
        return f"Stopped: {text}" if event.get("code") == INTERRUPTED else f"Error: {text}"
    if kind == "done":
        return text or f"Installed in {event.get('folder', '')}."
    return text or None


class DownloadBox(QWidget):
    model_ready = Signal(str)  # the installed folder
    busy_changed = Signal(bool)
    line = Signal(str)  # the child's output, for the panel's Details log

    def __init__(self, models_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models_dir = models_dir
        self.process = SetupProcess(self)
        self.process.line.connect(self._on_line)
        self.process.finished.connect(self._on_finished)
        self._stopping = ""  # "pause" or "cancel" while a stop is under way
        self._error = ""
        self._last: Progress | None = None
        self._done_folder = ""

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(
            text_label(
                "Download the ready-made model (INT8 weights, a few GB, from the Hugging "
                "Face hub). It continues where it stopped if interrupted.",
                "muted",
            )
        )
        row = QHBoxLayout()
        self.repo_edit = QLineEdit(DEFAULT_REPO)
        self.repo_edit.setAccessibleName("Model to download")
        self.repo_edit.setToolTip("A Hugging Face repository holding a converted OpenVINO model")
        row.addWidget(self.repo_edit, 1)
        self.download_button = push_button("Download", "primary")
        self.download_button.clicked.connect(self.start)
        row.addWidget(self.download_button)
        self.pause_button = push_button("Pause", tooltip="Stop for now; Resume continues")
        self.pause_button.clicked.connect(lambda: self._stop("pause"))
        row.addWidget(self.pause_button)
        self.cancel_button = push_button("Cancel")
        self.cancel_button.clicked.connect(lambda: self._stop("cancel"))
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, BAR_STEPS)
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setAccessibleName("Download progress")
        layout.addWidget(self.progress_bar)
        # Wraps: a failure explains what became of the partial download in a sentence or two.
        self.status_label = text_label("")
        self.status_label.setAccessibleName("Download status")
        layout.addWidget(self.status_label)
        self._show_idle()

    @property
    def running(self) -> bool:
        return self.process.running

    def start(self) -> None:
        repo = self.repo_edit.text().strip()
        if self.running or not repo:
            return
        problem = models_dir_problem(self.models_dir)
        if problem:
            self.download_button.setText(AGAIN)
            self._status(problem, error=True)
            return
        target = self.models_dir / target_name(repo)
        command = [*desklens_command(), "models", "--download", repo, "--progress", "json"]
        command += ["--models-dir", str(self.models_dir)]
        command += ["--force"] if target.exists() else []  # a broken model of that name
        self._stopping, self._error, self._done_folder = "", "", ""
        self._status("Connecting…")
        self._set_busy(True)
        self.process.start(command)

    def forget_failure(self) -> None:
        """Another set-up action starts: the last download's error is no longer the news."""
        if self.status_label.objectName() == "errorText" and not self.running:
            self.download_button.setText("Download")
            self._status("")

    def close_now(self) -> None:
        """The app is closing: stop the child; its partial download stays for next time."""
        self.process.close()

    # --- internals -----------------------------------------------------------------------

    def _stop(self, why: str) -> None:
        if self.running:
            self._stopping = why
            self._status("Pausing…" if why == "pause" else "Cancelling…")
            self.pause_button.setEnabled(False)
            self.cancel_button.setEnabled(False)
            self.process.stop()

    def _status(self, text: str, error: bool = False) -> None:
        self.status_label.setObjectName("errorText" if error else "")
        self.status_label.style().polish(self.status_label)  # the object name picks the colour
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    def _set_busy(self, busy: bool) -> None:
        self.repo_edit.setEnabled(not busy)
        self.download_button.setVisible(not busy)
        self.pause_button.setVisible(busy)
        self.cancel_button.setVisible(busy)
        self.pause_button.setEnabled(busy)
        self.cancel_button.setEnabled(busy)
        self.progress_bar.setVisible(busy or self._last is not None)
        self.busy_changed.emit(busy)

    def _show_idle(self) -> None:
        self._set_busy(False)
        self.progress_bar.setVisible(False)

    def _on_line(self, text: str) -> None:
        self.line.emit(text)
        try:
            event = json.loads(text)
        except ValueError:
            return  # a library's own message: only in the Details log
        kind = event.get("event") if isinstance(event, dict) else None
        if kind == "progress":
            self._last = Progress(
                event["done"], event["total"], event["speed"], event["eta_s"], event["file"]
            )
            self.progress_bar.setValue(int(self._last.fraction * BAR_STEPS))
            if not self._stopping:
                self._status(describe(self._last))
        elif kind == "step" and not self._stopping:
            self._status(event["text"])
        elif kind == "error" and event.get("code") != INTERRUPTED:
            self._error = event["text"]
        elif kind == "done":
            self._done_folder = event["folder"]

    def _on_finished(self, exit_code: int, crashed: bool) -> None:
        stopping, self._stopping = self._stopping, ""
        self._set_busy(False)
        kept = ""
        if self._last is not None and self._last.done:
            kept = f" {describe(self._last).split(',')[0]} downloaded so far is kept"
        if exit_code == 0 and not crashed:
            self.progress_bar.setValue(BAR_STEPS)
            self._status("Ready.")
            self.model_ready.emit(self._done_folder)
            return
        if stopping == "pause":
            self.download_button.setText("Resume")
            self._status(f"Paused.{kept and kept + ': Resume continues.'}")
        elif stopping == "cancel" or exit_code == INTERRUPTED:
            self.download_button.setText("Download")
            self.progress_bar.setVisible(False)
            tail = f"{kept} (hidden): Download continues from there." if kept else ""
            self._status(f"Cancelled. No model was installed.{tail}")
        else:
            self.download_button.setText(AGAIN)
            self._status(
                self._error or f"The download stopped unexpectedly (exit code {exit_code}).",
                error=True,
            )
