"""Settings > Tray: "Show in the system tray" and the global shortcut, checked as typed."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from desktop.gui.settings import AppSettings
from desktop.gui.tray.keys import DEFAULT_SHORTCUT, ShortcutError, parse_shortcut
from desktop.gui.widgets.basics import text_label


class TrayRow(QWidget):
    def __init__(self, settings: AppSettings) -> None:
        super().__init__()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        self.check = QCheckBox("Show in the system tray")
        self.check.setAccessibleName("Show in the system tray")
        self.check.setToolTip(
            "A tray icon while DeskLens is open (capture → text, capture → ask), and a "
            "global shortcut that captures a screen region from any program."
        )
        self.check.setChecked(settings.tray)
        self.edit = QLineEdit(settings.global_shortcut)
        self.edit.setAccessibleName("Global shortcut")
        self.edit.setPlaceholderText(f"No global shortcut (e.g. {DEFAULT_SHORTCUT})")
        self.edit.setToolTip("Also the keys `desklens tray` takes.")
        self.problem = text_label(selectable=False)
        self.problem.setObjectName("errorText")
        self.problem.setWordWrap(True)
        keys = QHBoxLayout()
        label = QLabel("Global shortcut")
        label.setBuddy(self.edit)
        keys.addWidget(label)
        keys.addWidget(self.edit, 1)
        column.addWidget(self.check)
        column.addLayout(keys)
        column.addWidget(self.problem)
        self.edit.textChanged.connect(self._check)
        self._check()

    @property
    def enabled(self) -> bool:
        return self.check.isChecked()

    @property
    def shortcut(self) -> str:
        """The shortcut as written back ("" for none; as typed when it does not parse, so
        that the window says why it takes no keys)."""
        text = self.edit.text().strip()
        try:
            return parse_shortcut(text).label if text else ""
        except ShortcutError:
            return text

    def _check(self) -> None:
        text = self.edit.text().strip()
        problem = ""
        if text:
            try:
                parse_shortcut(text)
            except ShortcutError as exc:
                problem = str(exc)
        self.problem.setText(problem)
        self.problem.setVisible(bool(problem))
