"""The panel shown while no model can be used: what is missing, and how to get a model.

Both ways run the project's convert.py in a QProcess (a separate Python, so a crash or a
multi-gigabyte export never touches the app): from a Hugging Face id or checkpoint folder, or
importing a folder that already holds OpenVINO IR. Its "[convert] ..." lines are the progress.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QProcessEnvironment, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.widgets import flat_button, push_button, text_label

CONVERT_SCRIPT = Path(__file__).resolve().parents[2] / "convert.py"
DEFAULT_MODEL_ID = "Qwen/Qwen3-VL-2B-Instruct"
WEIGHT_FORMATS = ("int8", "int4", "fp16")
IR_MARKER = "openvino_language_model.xml"  # what makes convert.py import instead of export
_STEP = "[convert] "
_DONE = "[convert] Done in "
_ERROR = "convert.py: error: "
CANCEL_GRACE_MS = 5000
CLOSE_GRACE_MS = 3000  # closing the app waits this long for the converter to clean up
STAGING_PREFIX = ".desklens-tmp-"  # convert.py's staging folders: "<prefix><name>-<pid>"

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
    model_ready = Signal(str)  # the converted or imported folder

    def __init__(self, models_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.setAccessibleName("Model setup")
        self.models_dir = models_dir
        self.process: QProcess | None = None
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

        self.form = QWidget()
        form = QVBoxLayout(self.form)
        form.setContentsMargins(0, 4, 0, 0)
        form.setSpacing(8)
        form.addWidget(
            text_label("Convert a model (needs the internet for a Hugging Face id):", "muted")
        )
        convert_row = QHBoxLayout()
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText(
            f"Hugging Face id, e.g. {DEFAULT_MODEL_ID}, or a folder"
        )
        self.source_edit.setText(DEFAULT_MODEL_ID)
        self.source_edit.setAccessibleName("Model to convert")
        convert_row.addWidget(self.source_edit, 1)
        browse = push_button("Folder…", tooltip="Choose a local checkpoint folder")
        browse.clicked.connect(self._browse_checkpoint)
        convert_row.addWidget(browse)
        self.format_combo = QComboBox()
        self.format_combo.addItems(WEIGHT_FORMATS)
        self.format_combo.setAccessibleName("Weight format")
        self.format_combo.setToolTip("INT8: best quality per size. INT4: smaller and faster.")
        convert_row.addWidget(self.format_combo)
        self.convert_button = push_button("Convert", "primary")
        self.convert_button.clicked.connect(self._convert_clicked)
        convert_row.addWidget(self.convert_button)
        form.addLayout(convert_row)
        import_row = QHBoxLayout()
        import_row.addWidget(text_label("Already have a converted OpenVINO folder?", "muted"), 1)
        self.import_button = push_button("Import folder…")
        self.import_button.clicked.connect(self._import_clicked)
        import_row.addWidget(self.import_button)
        form.addLayout(import_row)
        layout.addWidget(self.form)

        self.progress_box = QWidget()
        progress = QVBoxLayout(self.progress_box)
        progress.setContentsMargins(0, 4, 0, 0)
        status_row = QHBoxLayout()
        self.step_label = text_label("", selectable=False)
        status_row.addWidget(self.step_label, 1)
        self.details_button = flat_button("Details", "Show the converter's output")
        self.details_button.setCheckable(True)
        status_row.addWidget(self.details_button)
        self.cancel_button = push_button("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        status_row.addWidget(self.cancel_button)
        progress.addLayout(status_row)
        self.progress_bar = QProgressBar()
        self.progress_bar.setRange(0, 0)  # the converter reports steps, not percentages
        self.progress_bar.setAccessibleName("Conversion progress")
        progress.addWidget(self.progress_bar)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        self.log.setFixedHeight(140)
        self.log.setAccessibleName("Converter output")
        self.log.hide()
        self.details_button.toggled.connect(self.log.setVisible)
        progress.addWidget(self.log)
        self.progress_box.hide()
        layout.addWidget(self.progress_box)
        self.result_label = text_label("", "errorText")
        self.result_label.hide()
        layout.addWidget(self.result_label)
        if not can_convert():
            self._disable(
                "This copy of DeskLens cannot run convert.py. Copy a converted model folder "
                f"into {models_dir} and start DeskLens again."
            )

    # --- public --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.process is not None

    def show_problem(self, text: str) -> None:
        """Explains why the configured model cannot be used (instead of "none set up")."""
        self.explanation.setText(
            f"{text}\n\nText extraction still works. Import or convert a model to chat."
        )

    def show_intro(self) -> None:
        self.explanation.setText(INTRO)

    def start(self, source: str, weight_format: str | None = None) -> None:
        """Runs convert.py on `source` (hub id, checkpoint folder or IR folder)."""
        if self.running:
            return
        importing = (Path(source).expanduser() / IR_MARKER).is_file()
        fmt = None if importing else (weight_format or WEIGHT_FORMATS[0])
        self._target = self.models_dir / target_name(source, fmt or "")
        args = ["-u", str(CONVERT_SCRIPT), "--model", source, "--output", str(self._target)]
        args += ["--force"] if self._target.exists() else []
        args += ["--weight-format", fmt] if fmt else []
        try:
            self.models_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.result_label.setText(
                f"Cannot create the models folder {self.models_dir}: {exc.strerror or exc}."
            )
            self.result_label.show()
            return
        self._error_line = ""
        self.log.clear()
        self.result_label.hide()
        self.step_label.setText("Importing…" if importing else "Starting the converter…")
        self.form.setEnabled(False)
        self.progress_box.show()
        self.process = QProcess(self)
        self.process.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        env = QProcessEnvironment.systemEnvironment()
        env.insert("PYTHONUNBUFFERED", "1")
        self.process.setProcessEnvironment(env)
        self.process.setWorkingDirectory(str(CONVERT_SCRIPT.parent))
        self.process.readyReadStandardOutput.connect(self._read_output)
        self.process.finished.connect(self._on_finished)
        self.process.errorOccurred.connect(self._on_process_error)
        self.process.start(sys.executable, args)

    def cancel(self) -> None:
        """Interrupts the converter; it removes its half-written staging folder itself."""
        process = self.process
        if process is None:
            return
        self.step_label.setText("Cancelling…")
        if process.state() == QProcess.ProcessState.Starting:
            process.waitForStarted(3000)  # only a pid can be signalled
        if os.name == "posix" and process.processId():
            os.kill(process.processId(), signal.SIGINT)  # KeyboardInterrupt: clean exit
            QTimer.singleShot(CANCEL_GRACE_MS, self, lambda: self._kill_if_running(process))
        else:
            process.kill()

    def kill(self) -> None:
        """The app is closing: interrupt the converter (it removes its staging folder), end it
        hard if it has not stopped within a few seconds, and remove what it left."""
        process = self.process
        if process is None:
            return
        pid = process.processId()
        if os.name == "posix" and pid and process.state() == QProcess.ProcessState.Running:
            os.kill(pid, signal.SIGINT)
            process.waitForFinished(CLOSE_GRACE_MS)
        if process.state() != QProcess.ProcessState.NotRunning:
            process.kill()
            process.waitForFinished(3000)
        if pid and self._target is not None:
            # A killed converter leaves its (hidden, possibly gigabytes) staging folder behind.
            staging = self._target.parent / f"{STAGING_PREFIX}{self._target.name}-{pid}"
            shutil.rmtree(staging, ignore_errors=True)

    # --- internals -----------------------------------------------------------------------

    def _kill_if_running(self, process: QProcess) -> None:
        if self.process is process and process.state() != QProcess.ProcessState.NotRunning:
            process.kill()

    def _disable(self, reason: str) -> None:
        self.form.setEnabled(False)
        self.result_label.setText(reason)
        self.result_label.show()

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

    def _read_output(self) -> None:
        assert self.process is not None
        text = bytes(self.process.readAllStandardOutput().data()).decode(errors="replace")
        for line in text.splitlines():
            self.log.appendPlainText(line)
            if line.startswith(_ERROR):
                self._error_line = line[len(_ERROR) :]
            elif line.startswith(_STEP) and not line.startswith(_DONE):
                self.step_label.setText(line[len(_STEP) :])

    def _on_process_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._finish(False, f"The converter could not be started ({sys.executable}).")

    def _on_finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        self._read_output()
        if exit_status == QProcess.ExitStatus.NormalExit and exit_code == 0:
            self._finish(True, "")
        elif exit_code == 130 or exit_status == QProcess.ExitStatus.CrashExit:
            self._finish(False, "Cancelled. Nothing was written.")
        else:
            self._finish(
                False, self._error_line or f"The converter failed (exit code {exit_code})."
            )

    def _finish(self, ok: bool, message: str) -> None:
        if self.process is not None:
            self.process.deleteLater()
        self.process = None
        self.progress_box.hide()
        self.form.setEnabled(True)
        self.result_label.setText(message)
        self.result_label.setVisible(bool(message))
        if ok and self._target is not None:
            self.model_ready.emit(str(self._target))
