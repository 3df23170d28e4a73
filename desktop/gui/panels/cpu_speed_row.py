"""Settings > This CPU: the precisions the engine measured as fastest on this CPU (tuning.py),
and "Measure again", which reloads the model and measures on the worker thread."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QHBoxLayout, QWidget

from desktop.gui.widgets.basics import push_button, text_label


class CpuSpeedRow(QWidget):
    def __init__(self, precisions: str, measure_again: Callable[[], None]) -> None:
        super().__init__()
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.label = text_label(precisions[:1].upper() + precisions[1:] + ".")
        self.button = push_button(
            "Measure again",
            tooltip="Reloads the model and times each precision this CPU computes (seconds "
            "to a minute); the fastest within the engine's tolerance is kept.",
        )
        self._measure_again = measure_again
        self.button.clicked.connect(self._clicked)
        row.addWidget(self.label, 1)
        row.addWidget(self.button)

    def _clicked(self) -> None:
        self._measure_again()
        self.button.setEnabled(False)
        self.label.setText("Measuring again: the model is loading.")
