"""Status bar: model (this computer's, or a server's), device, state, the last answer's speed,
and batch OCR progress."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

from desktop.core.chat import AnswerStats
from desktop.core.reading_summary import image_reading
from desktop.gui.theme import current_theme
from desktop.gui.widgets.basics import ElidedLabel, flat_button

if TYPE_CHECKING:
    from desktop.gui.workers.local_api import LocalApi

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
        # The model's name and the speed line give way in a narrow window (cut with "…",
        # whole in their tooltips) rather than widening it.
        self.model_label = ElidedLabel("No model")
        self.model_label.setAccessibleName("Model")
        self.device_label = QLabel()
        self.device_label.setAccessibleName("Device")
        self.stats_label = ElidedLabel()
        self.stats_label.setAccessibleName("Speed of the last answer")
        self.stats_label.set_tip("The speed of the last answer")
        self.stats_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.api_label = QLabel()  # the Local API is on (and answering a request)
        self.api_label.setAccessibleName("Local API")
        self.api_label.hide()
        self.progress = QProgressBar()
        self.progress.setFixedWidth(160)
        self.progress.setAccessibleName("Text extraction progress")
        self.progress.setTextVisible(False)
        self.progress_label = QLabel()
        self.cancel_button = flat_button("Cancel", "Cancel the text extraction")
        self.cancel_button.clicked.connect(self.cancel_batch)
        self.addWidget(self.state_label)
        self.addWidget(self.model_label, 1)
        self.addWidget(self.device_label)
        # The speed line is a normal widget: a message ("Saved …") covers it for its few
        # seconds. Stretched among the permanent ones it left the message no room at all.
        self.addWidget(self.stats_label, 2)
        for widget in (self.progress_label, self.progress, self.cancel_button):
            self.addPermanentWidget(widget)
        self.addPermanentWidget(self.api_label)
        self.end_batch()
        self.state = ""
        self.set_state("no model")

    def set_state(self, state: str, detail: str = "", tip: str = "") -> None:
        self.state = state
        theme = current_theme()
        colour = {
            "ready": "#2e9d57",
            "generating": theme.accent,
            "loading": "#d49a17",
            "error": theme.error_text,
        }.get(state, theme.muted)
        if state == "generating":  # a new answer: the last one's figures are not its own
            self.stats_label.setText("")
        text = detail or STATES.get(state, state)
        self.state_label.setText(f'<span style="color:{colour}">●</span>&nbsp;{text}')
        self.state_label.setToolTip(tip or text)

    def set_model(self, name: str, device: str = "", weights: str = "", server: str = "") -> None:
        """This computer's model on `device`, or a model server's (`server`: its host)."""
        if server:  # the name is the server's only (or first) until it is connected to
            self.model_label.setText(f"{name} · server {server}" if name else f"server {server}")
            self.model_label.set_tip(
                f"{name} on the server at {server}: your questions and images go there"
            )
        else:
            self.model_label.setText(name)
            self.model_label.set_tip(f"{name} ({weights})" if weights else name)
        self.device_label.setText(device)
        self.device_label.setVisible(bool(device))

    def set_stats(self, stats: AnswerStats | None) -> None:
        """The last answer's speed; None or an answer without tokens clears it, so an older
        answer's figures never stand for a newer one."""
        if stats is None or not stats.generated_tokens:
            self.stats_label.setText("")
            return
        self.stats_label.setText(stats_text(stats))

    def follow_api(self, api: LocalApi) -> None:
        """Shows the Local API's state from now on (and now: it may have started already)."""

        def show(*_args: object) -> None:
            server = api.server
            self.set_api(server.url if api.running and server is not None else "", api.busy)

        api.running_changed.connect(show)
        api.busy_changed.connect(show)
        show()

    def set_api(self, url: str, busy: bool = False) -> None:
        """The Local API: on at `url` ("" hides it), answering a request while `busy`."""
        self.api_label.setText("API: answering a request…" if busy else "API on")
        self.api_label.setToolTip(
            f"The Local API is on at {url} (Settings > Local API)" if url else ""
        )
        self.api_label.setVisible(bool(url))

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
    if stats.server:  # the network's time included; the server's own figures are its own
        return f"{text} · from {stats.server}"
    if image_reading(stats):
        text += f" · {image_reading(stats)}"
    if stats.drafted_tokens:
        text += f" · {stats.accepted_tokens}/{stats.drafted_tokens} drafted tokens accepted"
    return text
