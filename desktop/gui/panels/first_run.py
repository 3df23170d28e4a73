"""The panel shown while no model can be used: what is missing, and how to get a model.

Three ways, each a child process (SetupProcess) so a crash or a multi-gigabyte job never
touches the app: Download the ready INT8 model (`desklens models --download`, DownloadBox),
Import a folder that already holds OpenVINO IR (`desklens models --import`), and, in a source
checkout only, Convert a Hugging Face checkpoint with convert.py (it needs torch).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QPoint, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.core.exit_codes import INTERRUPTED
from desktop.core.model_setup.checks import IR_MARKER
from desktop.core.model_setup.convert_output import DONE_PREFIX, ERROR_PREFIX, STEP_PREFIX
from desktop.core.model_setup.staging import TMP_PREFIX
from desktop.gui.widgets.basics import flat_button, push_button, text_label
from desktop.gui.widgets.download_box import DownloadBox, log_sentence
from desktop.gui.workers.setup_process import (
    SOURCE_ROOT,
    SetupProcess,
    desklens_command,
    models_dir_problem,
)

CONVERT_SCRIPT = SOURCE_ROOT / "convert.py"
DEFAULT_MODEL_ID = "Qwen/Qwen3-VL-2B-Instruct"
WEIGHT_FORMATS = ("int8", "int4", "fp16")

INTRO = (
    "DeskLens answers questions with a vision-language model converted for OpenVINO, and "
    "none is set up yet. Text extraction already works: drop a screenshot and click "
    "Extract text."
)


def can_convert() -> bool:
    """A source checkout (or an install with Python beside it), not a frozen bundle."""
    return CONVERT_SCRIPT.is_file() and not getattr(sys, "frozen", False)


def target_name(source: str, weight_format: str) -> str:
    """The folder name convert.py would choose: imports keep their name."""
    local = Path(source).expanduser()
    if local.is_dir():
        return local.name if (local / IR_MARKER).is_file() else f"{local.name}-{weight_format}"
    return f"{source.rstrip('/').split('/')[-1] or 'model'}-{weight_format}"


class FirstRunPanel(QFrame):
    model_ready = Signal(str)  # the downloaded, imported or converted folder
    server_requested = Signal()  # "Use a server…": Settings, with "A server" chosen

    def __init__(self, models_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.setAccessibleName("Model setup")
        self.models_dir = models_dir
        self.process = SetupProcess(self)
        self.process.line.connect(self._on_line)
        self.process.finished.connect(self._on_finished)
        self._target: Path | None = None
        self._error_line = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(22, 18, 22, 18)
        layout.setSpacing(10)
        title = QLabel("Set up the AI model")
        title.setObjectName("cardTitle")
        layout.addWidget(title)
        self.explanation = text_label(INTRO, selectable=True)
        layout.addWidget(self.explanation)

        self.download = DownloadBox(models_dir)
        self.download.model_ready.connect(self.model_ready)
        self.download.busy_changed.connect(self._on_download_busy)
        layout.addWidget(self.download)

        self.form = QWidget()
        form = QVBoxLayout(self.form)
        form.setContentsMargins(0, 4, 0, 0)
        form.setSpacing(8)
        import_row = QHBoxLayout()
        import_row.addWidget(text_label("Already have a converted OpenVINO folder?", "muted"), 1)
        self.import_button = push_button("Import folder…")
        self.import_button.clicked.connect(self._import_clicked)
        import_row.addWidget(self.import_button)
        form.addLayout(import_row)
        server_row = QHBoxLayout()
        server_row.addWidget(text_label("Or use a model server on your network.", "muted"), 1)
        self.server_button = push_button("Use a server…")
        self.server_button.clicked.connect(self.server_requested)
        server_row.addWidget(self.server_button)
        form.addLayout(server_row)
        self.convert_box = self._convert_row()
        form.addWidget(self.convert_box)
        self.convert_box.setVisible(can_convert())  # convert.py needs torch: not in a bundle
        layout.addWidget(self.form)

        self.progress_box = QWidget()
        progress = QVBoxLayout(self.progress_box)
        progress.setContentsMargins(0, 4, 0, 0)
        status_row = QHBoxLayout()
        self.step_label = text_label("", selectable=False)
        status_row.addWidget(self.step_label, 1)
        self.cancel_button = push_button("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        status_row.addWidget(self.cancel_button)
        progress.addLayout(status_row)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 0)  # import and convert report steps, not percentages
        self.progress_bar.setAccessibleName("Set-up progress")
        progress.addWidget(self.progress_bar)
        self.progress_box.hide()
        layout.addWidget(self.progress_box)

        details_row = QHBoxLayout()
        details_row.addStretch(1)
        self.details_button = flat_button("Details", "Show the set-up commands' output")
        self.details_button.setCheckable(True)
        details_row.addWidget(self.details_button)
        layout.addLayout(details_row)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        self.log.setFixedHeight(140)
        self.log.setAccessibleName("Set-up output")
        self.log.hide()
        self.details_button.toggled.connect(self._show_details)
        self.download.line.connect(self._log_download_line)
        layout.addWidget(self.log)
        self.result_label = text_label("", "errorText")
        self.result_label.hide()
        layout.addWidget(self.result_label)

    def _convert_row(self) -> QWidget:
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(
            text_label("Or convert a checkpoint (needs the convert extra with torch):", "muted")
        )
        row = QHBoxLayout()
        self.source_edit = QLineEdit(DEFAULT_MODEL_ID)
        self.source_edit.setPlaceholderText(
            f"Hugging Face id, e.g. {DEFAULT_MODEL_ID}, or a folder"
        )
        self.source_edit.setAccessibleName("Model to convert")
        row.addWidget(self.source_edit, 1)
        browse = push_button("Folder…", tooltip="Choose a local checkpoint folder")
        browse.clicked.connect(self._browse_checkpoint)
        row.addWidget(browse)
        self.format_combo = QComboBox()
        self.format_combo.addItems(WEIGHT_FORMATS)
        self.format_combo.setAccessibleName("Weight format")
        self.format_combo.setToolTip("INT8: best quality per size. INT4: smaller and faster.")
        row.addWidget(self.format_combo)
        self.convert_button = push_button("Convert", "primary")
        self.convert_button.clicked.connect(self._convert_clicked)
        row.addWidget(self.convert_button)
        column.addLayout(row)
        return box

    # --- public --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.process.running or self.download.running

    def show_problem(self, text: str) -> None:
        """Explains why the configured model cannot be used (instead of "none set up")."""
        self.explanation.setText(
            f"{text}\n\nText extraction still works. Download, import or convert a model to chat."
        )

    def show_intro(self) -> None:
        self.explanation.setText(INTRO)

    def start(self, source: str, weight_format: str | None = None) -> None:
        """Imports `source` if it holds OpenVINO IR, else converts it (hub id or checkpoint)."""
        if self.running:
            return
        self.download.forget_failure()
        problem = models_dir_problem(self.models_dir)
        if problem:
            self.result_label.setText(problem)
            self.result_label.show()
            return
        importing = (Path(source).expanduser() / IR_MARKER).is_file()
        fmt = None if importing else (weight_format or WEIGHT_FORMATS[0])
        self._target = self.models_dir / target_name(source, fmt or "")
        force = ["--force"] if self._target.exists() else []
        if importing:
            command = [*desklens_command(), "models", "--import", source, "--progress", "json"]
            command += ["--models-dir", str(self.models_dir), "--name", self._target.name]
        else:
            command = [sys.executable, "-u", str(CONVERT_SCRIPT), "--model", source]
            command += ["--output", str(self._target), "--weight-format", fmt or "int8"]
        self._error_line = ""
        self.log.clear()
        self.result_label.hide()
        self.step_label.setText("Importing…" if importing else "Starting the converter…")
        self.form.setEnabled(False)
        self.download.setEnabled(False)
        self.progress_box.show()
        self.process.start(command + force)

    def cancel(self) -> None:
        """Interrupts the import or conversion; it removes its staging folder itself."""
        if self.process.running:
            self.step_label.setText("Cancelling…")
            self.process.stop()

    def kill(self) -> None:
        """The app is closing: stop every child, removing what a killed converter left (a
        download's partial files stay: the next Download continues them)."""
        self.download.close_now()
        pid = self.process.close()
        if pid and self._target is not None:
            staging = self._target.parent / f"{TMP_PREFIX}{self._target.name}-{pid}"
            shutil.rmtree(staging, ignore_errors=True)

    # --- internals -----------------------------------------------------------------------

    def _on_download_busy(self, busy: bool) -> None:
        self.form.setEnabled(not busy)
        if busy:
            self.result_label.hide()

    def _log_download_line(self, text: str) -> None:
        sentence = log_sentence(text)  # byte progress (thousands of lines) is the bar's
        if sentence:
            self.log.appendPlainText(sentence)

    def _show_details(self, shown: bool) -> None:
        """Opens the log and scrolls the card's holder to it, so it is not cut at the edge."""
        self.log.setVisible(shown)
        holder = self.parentWidget()
        while holder is not None and not isinstance(holder, QScrollArea):
            holder = holder.parentWidget()
        if shown and holder is not None:
            # The card grows first (its layouts answer posted requests, a level at a time).
            for _level in range(4):
                QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
            # Both ends (ensureWidgetVisible would only bring the log's text cursor in).
            content = holder.widget()
            if content is None:
                return
            top = self.log.mapTo(content, QPoint(0, 0))
            holder.ensureVisible(top.x(), top.y() + self.log.height(), 0, 8)
            holder.ensureVisible(top.x(), top.y(), 0, 8)

    def _browse_checkpoint(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a Hugging Face checkpoint folder")
        if folder:
            self.source_edit.setText(folder)

    def _convert_clicked(self) -> None:
        source = self.source_edit.text().strip()
        if source:
            self.start(source, self.format_combo.currentText())

    def _import_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a converted OpenVINO model folder")
        if folder:
            self.start(folder)

    def _on_line(self, line: str) -> None:
        """convert.py prints "[convert] step" lines; `desklens models` prints JSON events."""
        sentence = log_sentence(line)
        if sentence:
            self.log.appendPlainText(sentence)
        if line.startswith(ERROR_PREFIX):
            self._error_line = line[len(ERROR_PREFIX) :]
        elif line.startswith(STEP_PREFIX) and not line.startswith(DONE_PREFIX):
            self.step_label.setText(line[len(STEP_PREFIX) :])
        elif line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                return
            if event.get("event") == "step":
                self.step_label.setText(event["text"])
            elif event.get("event") == "error" and event.get("code") != INTERRUPTED:
                self._error_line = event["text"]

    def _on_finished(self, exit_code: int, crashed: bool) -> None:
        if exit_code == 0 and not crashed:
            self._finish(True, "")
        elif exit_code == INTERRUPTED or crashed or self.process.stop_requested:
            self._finish(False, "Cancelled. Nothing was written.")
        else:
            self._finish(False, self._error_line or f"Setting up failed (exit code {exit_code}).")

    def _finish(self, ok: bool, message: str) -> None:
        self.progress_box.hide()
        self.form.setEnabled(True)
        self.download.setEnabled(True)
        self.result_label.setText(message)
        self.result_label.setVisible(bool(message))
        if ok and self._target is not None:
            self.model_ready.emit(str(self._target))
