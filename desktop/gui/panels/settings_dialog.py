"""Preferences: model folder, device, image detail, answer length, reading ahead, skipping
repeated areas, theme, font size, the local API."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.flows.capturing import capture_action_combo
from desktop.gui.flows.own_presets import OwnPresetsFlow
from desktop.gui.panels.presets_editor import PresetsRow
from desktop.gui.settings import DETAIL_LEVELS, DEVICES, THEMES, AppSettings
from desktop.gui.widgets.basics import ok_cancel_buttons, push_button
from desktop.gui.workers.local_api import LocalApi, LocalApiRow

# The published figures (PixelPrune, arXiv 2604.00886, Qwen3-VL-2B-Instruct): DeskLens cannot
# measure answer quality with real weights on its own machines.
SKIP_REPEATS_HELP = (
    "Blocks of 32x32 pixels that are exact copies of a neighbour (white margins, flat "
    "toolbars, empty table cells) are read once: a screenshot is read in a fraction of the "
    "time, with the same pixels. Published for this model: OCRBench 86.9 -> 87.3, DocVQA "
    "92.7 -> 92.0 (PixelPrune). Photos keep nearly every block. Changing it reloads the model."
)


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
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.setMinimumWidth(520)
        self._original = settings
        layout = QVBoxLayout(self)
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)

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
        layout.addLayout(form)

        layout.addWidget(ok_cancel_buttons(self))

    def result_settings(self) -> AppSettings:
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
        )

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a converted model folder")
        if folder:
            self.model_edit.setText(folder)

    def _show_detail(self, index: int) -> None:
        self.detail_label.setText(detail_text(DETAIL_LEVELS[index]))


def _nearest_level(tokens: int) -> int:
    return min(range(len(DETAIL_LEVELS)), key=lambda i: abs(DETAIL_LEVELS[i] - tokens))
