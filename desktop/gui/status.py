"""Status bar: model, device, state, the last answer's speed, and batch OCR progress."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

from desktop.core.chat import AnswerStats
from desktop.gui.theme import current_theme
from desktop.gui.widgets import flat_button

STATES = {
    "loading": "Loading model…",
    "ready": "Ready",
    "generating": "Generating…",
    "error": "Model error",
    "no model": "No model",
}


class StatusBar(QStatusBar):
    cancel_batch = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeGripEnabled(False)
        self.state_label = QLabel()
        self.state_label.setAccessibleName("Model state")
        self.model_label = QLabel("No model")
        self.model_label.setAccessibleName("Model")
        self.device_label = QLabel()
        self.device_label.setAccessibleName("Device")
        self.stats_label = QLabel()
        self.stats_label.setAccessibleName("Speed of the last answer")
        self.progress = QProgressBar()
        self.progress.setFixedWidth(160)
        self.progress.setAccessibleName("Text extraction progress")
        self.progress.setTextVisible(False)
        self.progress_label = QLabel()
        self.cancel_button = flat_button("Cancel", "Cancel the text extraction")
        self.cancel_button.clicked.connect(self.cancel_batch)
        for widget in (self.state_label, self.model_label, self.device_label):
            self.addWidget(widget)
        for widget in (self.progress_label, self.progress, self.cancel_button, self.stats_label):
            self.addPermanentWidget(widget)
        self.end_batch()
        self.state = ""
        self.set_state("no model")

    def set_state(self, state: str, detail: str = "") -> None:
        self.state = state
        theme = current_theme()
        colour = {
            "ready": "#2e9d57",
            "generating": theme.accent,
            "loading": "#d49a17",
            "error": theme.error_text,
        }.get(state, theme.muted)
        text = detail or STATES.get(state, state)
        self.state_label.setText(f'<span style="color:{colour}">●</span>&nbsp;{text}')
        self.state_label.setToolTip(text)

    def set_model(self, name: str, device: str = "", weights: str = "") -> None:
        self.model_label.setText(name)
        self.model_label.setToolTip(f"{name} ({weights})" if weights else name)
        self.device_label.setText(device)
        self.device_label.setVisible(bool(device))

    def set_stats(self, stats: AnswerStats | None) -> None:
        if stats is None or not stats.generated_tokens:
            self.stats_label.setText("")
            return
        self.stats_label.setText(stats_text(stats))

    def set_batch(self, done: int, total: int) -> None:
        for widget in (self.progress_label, self.progress, self.cancel_button):
            widget.show()
        self.progress.setRange(0, total)
        self.progress.setValue(done)
        self.progress_label.setText(f"Extracting text {done}/{total}")

    def end_batch(self) -> None:
        for widget in (self.progress_label, self.progress, self.cancel_button):
            widget.hide()


def stats_text(stats: AnswerStats) -> str:
    """The speed line of an answer; drafted tokens only when drafting ran."""
    text = f"TTFT {stats.ttft_s:.2f} s · {stats.tokens_per_s:.1f} tok/s"
    if stats.image_tokens():
        text += f" · {stats.image_tokens()}"
    if stats.drafted_tokens:
        text += f" · {stats.accepted_tokens}/{stats.drafted_tokens} drafted tokens accepted"
    return text
