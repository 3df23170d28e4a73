"""Preferences: which model (this computer's or a server's), model folder, device, image
detail, answer length, reading ahead, skipping repeated areas, theme, font size, the local API.

With "A server" chosen, OK first checks the address (off the GUI thread) and, for a server
the user has not agreed to before, asks before questions and images go there; declined, the
dialog stays open and nothing changes.

The rows scroll when the screen is too short for them (a 1366x768 laptop at 150 %, a large
font): the dialog is as tall as they need up to the screen's free height, OK stays in view."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QMessageBox,
    QScrollArea,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.flows.capturing import capture_action_combo
from desktop.gui.flows.own_presets import OwnPresetsFlow
from desktop.gui.panels.cpu_speed_row import CpuSpeedRow
from desktop.gui.panels.model_source_rows import ModelSourceRows
from desktop.gui.panels.presets_editor import PresetsRow
from desktop.gui.panels.redaction_patterns import PatternsRow
from desktop.gui.settings import DETAIL_LEVELS, DEVICES, THEMES, AppSettings
from desktop.gui.tray.settings_row import TrayRow
from desktop.gui.widgets.basics import ok_cancel_buttons, push_button
from desktop.gui.workers.local_api import LocalApi, LocalApiRow

if TYPE_CHECKING:
    from desktop.core.remote.config import ServerConfig
    from desktop.gui.flows.redacting import RedactFlow
    from desktop.gui.workers.server_check import ServerCheck

# The published figures (PixelPrune, arXiv 2604.00886, Qwen3-VL-2B-Instruct): DeskLens cannot
# measure answer quality with real weights on its own machines.
SKIP_REPEATS_HELP = (
    "Blocks of 32x32 pixels that are exact copies of a neighbour (white margins, flat "
    "toolbars, empty table cells) are read once: a screenshot is read in a fraction of the "
    "time, with the same pixels. Published for this model: OCRBench 86.9 -> 87.3, DocVQA "
    "92.7 -> 92.0 (PixelPrune). Photos keep nearly every block. Changing it reloads the model."
)


WINDOW_FRAME_PX = 48  # the title bar and borders the window manager adds
MIN_ROWS_PX = 120


def detail_text(tokens: int) -> str:
    megapixels = tokens * 32 * 32 / 1e6
    return f"{tokens} visual tokens per image (up to {megapixels:.1f} MP)"


class SettingsDialog(QDialog):
    def __init__(
        self,
        settings: AppSettings,
        devices: list[str] | None = None,
        parent: QWidget | None = None,
        local_api: LocalApi | None = None,
        own_presets: OwnPresetsFlow | None = None,
        server: ServerConfig | None = None,
        checker: ServerCheck | None = None,
        redaction: RedactFlow | None = None,
        speed: tuple[str, Callable[[], None]] | None = None,
    ) -> None:
        """`server`: the one saved (key included); `checker` runs its checks off this
        thread; `speed`: the precisions measured on this CPU and how to measure again."""
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(560)
        self._original = settings
        self._server: ServerConfig | None = None  # chosen, checked and agreed to (after OK)
        self._consented = settings.consented_servers
        layout = QVBoxLayout(self)
        self._page = page = QWidget()
        form = QFormLayout(page)
        form.setContentsMargins(0, 0, 8, 0)  # room beside the scroll bar when it shows
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self._form = form
        self.source = ModelSourceRows(form, settings, server, checker, self)
        self.source.agree = self._agree  # before Test connection sends anything too

        model_row = QHBoxLayout()
        self.model_edit = QLineEdit(settings.model_dir)
        self.model_edit.setPlaceholderText("Automatic (the converted model found)")
        self.model_edit.setAccessibleName("Model folder")
        model_row.addWidget(self.model_edit, 1)
        browse = push_button("Browse…")
        browse.clicked.connect(self._browse)
        model_row.addWidget(browse)
        form.addRow("Model folder", model_row)

        self.device_combo = QComboBox()
        self.device_combo.setAccessibleName("Device")
        choices = list(dict.fromkeys([*(devices or []), *DEVICES]))
        self.device_combo.addItems(choices)
        self.device_combo.setCurrentText(settings.device)
        form.addRow("Device", self.device_combo)

        self.detail_slider = QSlider(Qt.Orientation.Horizontal)
        self.detail_slider.setAccessibleName("Image detail")
        self.detail_slider.setRange(0, len(DETAIL_LEVELS) - 1)
        self.detail_slider.setPageStep(1)
        self.detail_slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.detail_slider.setValue(_nearest_level(settings.max_visual_tokens))
        self.detail_label = QLabel()
        self.detail_label.setObjectName("muted")
        self.detail_slider.valueChanged.connect(self._show_detail)
        detail_box = QVBoxLayout()
        ends = QHBoxLayout()
        ends.addWidget(QLabel("Faster"))
        ends.addWidget(self.detail_slider, 1)
        ends.addWidget(QLabel("More detail"))
        detail_box.addLayout(ends)
        detail_box.addWidget(self.detail_label)
        form.addRow("Image detail", detail_box)
        self._show_detail(self.detail_slider.value())

        self.length_spin = QSpinBox()
        self.length_spin.setAccessibleName("Maximum answer length")
        self.length_spin.setRange(16, 16384)
        self.length_spin.setSingleStep(256)
        self.length_spin.setSuffix(" tokens")
        self.length_spin.setValue(settings.max_new_tokens)
        form.addRow("Max answer length", self.length_spin)

        self.prepare_check = QCheckBox("Read images while I type")
        self.prepare_check.setAccessibleName("Read images while I type")
        self.prepare_check.setToolTip(
            "Start reading attached images, and a reopened chat, before you press Send, so the "
            "answer starts sooner. Turn it off to save battery."
        )
        self.prepare_check.setChecked(settings.prepare_ahead)
        form.addRow("Speed", self.prepare_check)
        self.skip_check = QCheckBox("Skip repeated areas")
        self.skip_check.setAccessibleName("Skip repeated areas")
        self.skip_check.setToolTip(SKIP_REPEATS_HELP)
        self.skip_check.setChecked(settings.skip_repeats)
        form.addRow("", self.skip_check)
        self.capture_combo = capture_action_combo(settings.capture_action)
        form.addRow("Capture", self.capture_combo)
        self.tray_row = TrayRow(settings)
        form.addRow("Tray", self.tray_row)

        self.theme_combo = QComboBox()
        self.theme_combo.setAccessibleName("Theme")
        for theme in THEMES:
            self.theme_combo.addItem(theme.capitalize(), theme)
        self.theme_combo.setCurrentIndex(THEMES.index(settings.theme))
        form.addRow("Theme", self.theme_combo)

        self.font_spin = QSpinBox()
        self.font_spin.setAccessibleName("Font size")
        self.font_spin.setRange(0, 24)
        self.font_spin.setSpecialValueText("System")
        self.font_spin.setSuffix(" pt")
        self.font_spin.setValue(settings.font_size)
        form.addRow("Font size", self.font_spin)
        self.api_row = LocalApiRow(settings, local_api)
        form.addRow("Local API", self.api_row)
        if own_presets is not None:
            form.addRow("My prompts", PresetsRow(own_presets))
        if redaction is not None:
            self.redaction_row = PatternsRow(redaction)
            form.addRow("Redaction", self.redaction_row)
        if speed is not None:
            self.speed_row = CpuSpeedRow(*speed)
            form.addRow("This CPU", self.speed_row)
        self.rows_area = QScrollArea()
        self.rows_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # its rows take the focus
        self.rows_area.setWidgetResizable(True)
        self.rows_area.setFrameShape(QFrame.Shape.NoFrame)
        self.rows_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.rows_area.setWidget(page)
        layout.addWidget(self.rows_area, 1)

        self.buttons = ok_cancel_buttons(self)
        layout.addWidget(self.buttons)
        # This computer's own settings are hidden while a server's model is chosen.
        self._local_layouts: list[QLayout] = [model_row, detail_box]
        self._local_fields: list[QWidget] = [self.device_combo, self.prepare_check, self.skip_check]
        self.source.source_changed.connect(self._show_local_rows)
        self._show_local_rows(self.source.wants_server)

    def result_settings(self) -> AppSettings:
        """The settings chosen (the model source as checked and agreed to by OK)."""
        return replace(
            self._original,
            model_dir=self.model_edit.text().strip(),
            device=self.device_combo.currentText(),
            max_visual_tokens=DETAIL_LEVELS[self.detail_slider.value()],
            max_new_tokens=self.length_spin.value(),
            prepare_ahead=self.prepare_check.isChecked(),
            skip_repeats=self.skip_check.isChecked(),
            theme=self.theme_combo.currentData(),
            font_size=self.font_spin.value(),
            local_api=self.api_row.enabled,
            capture_action=self.capture_combo.currentData(),
            tray=self.tray_row.enabled,
            global_shortcut=self.tray_row.shortcut,
            model_source="server" if self._server is not None else "local",
            consented_servers=self._consented,
        )

    def result_server(self) -> ServerConfig | None:
        """The server chosen (its URL normalized), or None for this computer's model."""
        return self._server

    def accept(self) -> None:
        if not self.source.wants_server:
            self._server = None
            super().accept()
            return
        self.buttons.setEnabled(False)
        self.source.check(self._on_server_checked)

    def done(self, result: int) -> None:
        self.source.cancel()
        super().done(result)

    def _on_server_checked(self, config: ServerConfig | None) -> None:
        self.buttons.setEnabled(True)
        if config is None:
            return  # the sentence is shown under the address
        if not self._agree(config):
            self.source.show_result(f"Not switched: nothing was sent to {config.host}.")
            return
        self._server = config
        super().accept()

    def _agree(self, config: ServerConfig) -> bool:
        """The user agreed to send to this address (now, or before): asked once per address,
        before anything goes there (Test connection too)."""
        settings = replace(self._original, consented_servers=self._consented)
        if settings.consented(config.url):
            return True
        if not confirm_server(self, config.host):
            return False
        self._consented = settings.with_consent(config.url).consented_servers
        return True

    def _show_local_rows(self, server: bool) -> None:
        for layout in self._local_layouts:
            self._form.setRowVisible(layout, not server)
        for field in self._local_fields:
            self._form.setRowVisible(field, not server)
        screen = self.screen()
        if screen is not None:
            self.fit_to(screen.availableGeometry())

    def fit_to(self, available: QRect) -> None:
        """As large as the rows need, within `available` (less room for the window frame);
        what does not fit scrolls."""
        self._page.adjustSize()
        need = self._page.sizeHint()
        outside = self.sizeHint() - self.rows_area.sizeHint()  # margins, spacing, the buttons
        room = available.height() - WINDOW_FRAME_PX - outside.height()
        scrolls = need.height() > room
        bar = self.rows_area.verticalScrollBar().sizeHint().width() if scrolls else 0
        height = max(MIN_ROWS_PX, min(need.height(), room))
        self.rows_area.setMinimumSize(need.width() + bar, height)
        layout = self.layout()
        if layout is not None:
            layout.activate()  # the dialog's minimum follows the rows' new one now
        self.resize(
            min(self.sizeHint().width(), available.width()),
            min(self.sizeHint().height(), available.height() - WINDOW_FRAME_PX),
        )

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a converted model folder")
        if folder:
            self.model_edit.setText(folder)

    def _show_detail(self, index: int) -> None:
        self.detail_label.setText(detail_text(DETAIL_LEVELS[index]))


def confirm_server(parent: QWidget, host: str) -> bool:
    """Asks before the first question goes to `host` (once per server address)."""
    reply = QMessageBox.question(
        parent,
        "Send your questions to a server?",
        f"Your questions, the images you attach and the chat so far will leave this computer "
        f"for {host}, and the answers will come from there. The text extraction (OCR) stays "
        "on this computer.",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Cancel,
    )
    return reply == QMessageBox.StandardButton.Yes


def _nearest_level(tokens: int) -> int:
    return min(range(len(DETAIL_LEVELS)), key=lambda i: abs(DETAIL_LEVELS[i] - tokens))
