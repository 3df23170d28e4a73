"""The question box: text, attached images, one-click presets, and Send that becomes Stop."""

from __future__ import annotations

from PySide6.QtCore import QMargins, QMimeData, QSize, Qt, Signal, SignalInstance
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.presets import PRESETS, Preset
from desktop.core.regions import Region
from desktop.gui.image_ref import ImageRef
from desktop.gui.theme import current_theme
from desktop.gui.widgets.attachment_chip import (
    ATTACHMENT_EDGE,
    MIN_CHIP_HEIGHT,
    AttachmentChip,
    order_tabs,
)
from desktop.gui.widgets.basics import ElidedLabel, push_button, set_role
from desktop.gui.widgets.composer_edit import ComposerEdit
from desktop.gui.widgets.icons import line_icon
from desktop.gui.widgets.region_picker import RegionDialog, RegionMarks, regions_said

COUNT_ROOM = 90  # what the image count keeps beside the preset chips before they fold
PRESET_TIPS = {
    "text": "Ask the AI to transcribe all text in the attached images (Extract text is the "
    "fast OCR, without the AI)",
    "markdown": "Ask the AI to convert the attached images to Markdown",
    "json": "Ask the AI for the fields in the attached images as JSON",
    "describe": "Ask the AI to describe the attached images",
}


OWN_PROMPTS_HEADER = "My prompts"  # over your own prompts in the Ask AI menu


class Composer(QFrame):
    send_requested = Signal(str, list)  # question, [ImageRef]
    preset_requested = Signal(str, list)  # preset key, [ImageRef]
    stop_requested = Signal()
    attach_requested = Signal()
    mime_pasted = Signal(QMimeData)
    view_requested = Signal(ImageRef)
    extract_requested = Signal(ImageRef)
    attachments_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self._attachments: list[ImageRef] = []
        self._generating = False
        self._hint = ""
        self.marks = RegionMarks()  # boxes drawn on the attached images
        self.regions_sent: tuple[Region, ...] = ()  # the question being sent's, during its signal
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)

        self._strip = QScrollArea()
        self._strip.setWidgetResizable(True)
        self._strip.setFrameShape(QFrame.Shape.NoFrame)
        self._strip.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._strip.setFixedHeight(ATTACHMENT_EDGE + 10)
        self._strip.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # its chips take the focus
        # Transparent through the theme's style sheet, by name: a style sheet set on the strip
        # itself would reach every child, the chips' context menus too (drawn black on X11).
        self._strip.setObjectName("attachStrip")
        self._strip.viewport().setAutoFillBackground(False)
        strip_content = QWidget()
        strip_content.setObjectName("attachStrip")
        self._strip_layout = QHBoxLayout(strip_content)
        self._strip_layout.setContentsMargins(0, 0, 0, 0)
        self._strip_layout.setSpacing(8)
        self._strip_layout.setAlignment(Qt.AlignmentFlag.AlignTop)
        self._strip_layout.addStretch(1)
        self._strip.setWidget(strip_content)
        self._strip.hide()
        layout.addWidget(self._strip)

        self.editor = ComposerEdit()
        self.editor.submitted.connect(self._on_send_clicked)
        self.editor.mime_pasted.connect(self.mime_pasted)
        self.editor.textChanged.connect(self._update_buttons)
        layout.addWidget(self.editor)
        self.ground_check = QCheckBox("Use the extracted text")  # shown with images attached
        self.ground_check.setToolTip(
            "Give the model the fast-OCR text of the images with the question (more reliable "
            "numbers and names; about 700 more tokens to read for a full screenshot)"
        )
        layout.addWidget(self.ground_check)

        # The row: the paperclip, the presets (chips, or one "Ask AI" menu when the row is
        # narrow), then the image count and the reading-ahead note, which grow and shrink
        # without moving the presets, and Send.
        row = QHBoxLayout()
        row.setSpacing(6)
        self.attach_button = QToolButton()
        self.attach_button.setProperty("role", "flat")
        self.attach_button.setToolTip("Attach images or PDFs")
        self.attach_button.setAccessibleName("Attach images")
        self.attach_button.setIconSize(QSize(20, 20))
        self.attach_button.clicked.connect(self.attach_requested)
        row.addWidget(self.attach_button)
        self.presets_label = QLabel("Ask AI:")
        self.presets_label.setObjectName("muted")
        row.addSpacing(4)
        row.addWidget(self.presets_label)
        self.preset_buttons = {}
        for key, preset in PRESETS.items():
            button = push_button(preset.label, "chip", PRESET_TIPS.get(key, preset.prompt))
            button.clicked.connect(lambda _=False, k=key: self._on_preset(k))
            row.addWidget(button)
            self.preset_buttons[key] = button
        self.own_presets_button = push_button(
            "Mine", "chip", "Your prompts (Settings > My prompts)"
        )
        self.own_presets_button.setMenu(QMenu(self.own_presets_button))
        self.own_presets_button.hide()
        row.addWidget(self.own_presets_button)
        self.ask_menu_button = push_button(
            "Ask AI", "chip", "Ask the AI about the attached images: transcribe, convert, describe"
        )
        self.ask_menu_button.setMenu(QMenu(self.ask_menu_button))
        self.ask_menu_button.hide()
        row.addWidget(self.ask_menu_button)
        self._own_presets: list[Preset] = []
        self._compact = False
        self.count_label = ElidedLabel()
        self.count_label.setObjectName("muted")
        self.count_label.setAccessibleName("Attached images and reading ahead")
        self.count_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        row.addWidget(self.count_label, 1)
        self.send_button = push_button("Send", "primary", "Send the question (Enter)")
        self.send_button.setIconSize(QSize(16, 16))
        self.send_button.clicked.connect(self._on_send_clicked)
        row.addWidget(self.send_button)
        self._row = row
        layout.addLayout(row)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self._fill_ask_menu()
        self.refresh_icons()
        self._update_buttons()

    # --- attachments ---------------------------------------------------------------------

    def attachments(self) -> list[ImageRef]:
        return list(self._attachments)

    def add_images(self, refs: list[ImageRef]) -> None:
        known = {ref.digest for ref in self._attachments}
        for ref in refs:
            if ref.digest in known:
                continue  # the same picture twice would only cost tokens
            known.add(ref.digest)
            self._attachments.append(ref)
            chip = AttachmentChip(ref)
            chip.clicked.connect(self.view_requested)
            chip.remove_requested.connect(self.remove_image)
            extract = QAction("Extract text", chip)
            extract.triggered.connect(lambda _=False, r=ref: self.extract_requested.emit(r))
            regions = QAction("Ask about a region…", chip)
            regions.triggered.connect(lambda _=False, r=ref: self.pick_regions(r))
            chip.insertActions(chip.actions()[0], [extract, regions])  # before its Remove
            self._strip_layout.insertWidget(self._strip_layout.count() - 1, chip)
        order_tabs(self._strip, self._chips_kept(), self.editor)
        self._attachments_changed()

    def remove_image(self, ref: ImageRef) -> None:
        self._attachments = [r for r in self._attachments if r is not ref]
        self.marks.drop(ref)
        for chip in self.chips():
            if chip.ref is ref:
                self._strip_layout.removeWidget(chip)
                chip.deleteLater()
        self._attachments_changed()

    def pick_regions(self, ref: ImageRef) -> RegionDialog:
        """Opens the box drawing on an attached image; the next question is about them."""
        dialog = RegionDialog(ref, self.marks.of(ref), self)
        dialog.chosen.connect(self.set_regions)
        dialog.open()
        return dialog

    def set_regions(self, ref: ImageRef, boxes: tuple[Region, ...]) -> None:
        self.marks.set(ref, boxes)
        for chip in self._chips_kept():
            if chip.ref is ref:
                chip.show_regions(boxes)
        self._show_count()

    def clear_images(self) -> None:
        for ref in list(self._attachments):
            self.remove_image(ref)

    def _chips_kept(self) -> list[AttachmentChip]:
        """The chips of the attached images (removed ones wait for their deletion)."""
        kept = {id(ref) for ref in self._attachments}
        return [chip for chip in self.chips() if id(chip.ref) in kept]

    def chips(self) -> list[AttachmentChip]:
        strip = self._strip.widget()
        return strip.findChildren(AttachmentChip) if strip is not None else []

    def set_own_presets(self, presets: list[Preset]) -> None:
        """The user's presets in the "Mine" menu after the built-in chips (`preset_requested`
        with their `user:` keys); the button shows only when there are some."""
        menu = self.own_presets_button.menu()
        menu.clear()
        for preset in presets:
            action = menu.addAction(preset.label)
            action.setToolTip(preset.prompt[:300])
            action.triggered.connect(lambda _=False, k=preset.key: self._on_preset(k))
        menu.setToolTipsVisible(True)
        self._own_presets = list(presets)
        self._fill_ask_menu()
        self._fit_row()

    def menu_buttons(self) -> list[QPushButton]:
        return [self.own_presets_button, self.ask_menu_button]

    # --- the presets row in a narrow composer ------------------------------------------

    @property
    def compact(self) -> bool:
        """The presets are in the "Ask AI" menu (the chips did not fit)."""
        return self._compact

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_row()

    def _fill_ask_menu(self) -> None:
        menu = self.ask_menu_button.menu()
        menu.clear()
        menu.setToolTipsVisible(True)
        for key, preset in PRESETS.items():
            action = menu.addAction(preset.label)
            action.setToolTip(PRESET_TIPS.get(key, preset.prompt))
            action.triggered.connect(lambda _=False, k=key: self._on_preset(k))
        if self._own_presets:  # a header the user can read: Fusion draws a section's text not
            menu.addSeparator()
            header = menu.addAction(OWN_PROMPTS_HEADER)
            header.setEnabled(False)
            font = header.font()
            font.setBold(True)
            header.setFont(font)
        for preset in self._own_presets:
            action = menu.addAction(preset.label)
            action.setToolTip(preset.prompt[:300])
            action.triggered.connect(lambda _=False, k=preset.key: self._on_preset(k))

    def _fit_row(self) -> None:
        """The chips when they fit beside Send (with room for the image count), else the
        one "Ask AI" menu: a label is never cut."""
        chips = [*self.preset_buttons.values()]
        if self._own_presets:
            chips.append(self.own_presets_button)
        spacing = self._row.spacing()
        needed = sum(w.sizeHint().width() + spacing for w in chips)
        needed += self.presets_label.sizeHint().width() + 4 + spacing
        for widget in (self.attach_button, self.send_button):
            needed += widget.sizeHint().width() + spacing
        layout = self.layout()
        margins = layout.contentsMargins() if layout is not None else QMargins()
        room = self.width() - margins.left() - margins.right() - COUNT_ROOM
        compact = needed > room
        self._compact = compact
        self.presets_label.setVisible(not compact)
        for chip in self.preset_buttons.values():
            chip.setVisible(not compact)
        self.own_presets_button.setVisible(bool(self._own_presets) and not compact)
        self.ask_menu_button.setVisible(compact)

    # --- state ---------------------------------------------------------------------------

    @property
    def generating(self) -> bool:
        return self._generating

    def set_generating(self, generating: bool) -> None:
        self._generating = generating
        self.send_button.setText("Stop" if generating else "Send")
        self.send_button.setToolTip("Stop the answer (Esc)" if generating else "Send (Enter)")
        self.send_button.setAccessibleName("Stop" if generating else "Send")
        set_role(self.send_button, "stop" if generating else "primary")
        self.refresh_icons()
        self._update_buttons()
        self._show_count()

    def refresh_icons(self) -> None:
        theme = current_theme()
        self.attach_button.setIcon(line_icon("attach", theme.muted))
        if self._generating:
            self.send_button.setIcon(line_icon("stop", theme.stop_text))
        else:
            self.send_button.setIcon(line_icon("send", theme.accent_text))

    def set_hint(self, text: str) -> None:
        """A quiet note after the image count (empty: none)."""
        self._hint = text
        self._show_count()

    @property
    def hint(self) -> str:
        return self._hint

    def focus_editor(self) -> None:
        self.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)

    # --- internals -----------------------------------------------------------------------

    def _on_send_clicked(self) -> None:
        if self._generating:
            self.stop_requested.emit()
            return
        question = self.editor.toPlainText().strip()
        if not question and not self._attachments:
            return
        images = self.attachments()
        if not question:  # images alone: the most useful default is a description
            self._on_preset("describe")
            return
        self.editor.clear()
        self._emit_with_regions(self.send_requested, question, images)

    def _on_preset(self, key: str) -> None:
        if self._generating or not self._attachments:
            return
        self._emit_with_regions(self.preset_requested, key, images=self.attachments())

    def _emit_with_regions(self, signal: SignalInstance, text: str, images: list[ImageRef]) -> None:
        """Sends the question with its images; its regions are `regions_sent` meanwhile."""
        self.regions_sent = self.marks.for_images(images)
        self.clear_images()
        try:
            signal.emit(text, images)
        finally:
            self.regions_sent = ()

    def _attachments_changed(self) -> None:
        count = len(self._attachments)
        # As tall as the tallest chip (a wide, short screenshot leaves no empty band), with
        # room for the horizontal scroll bar.
        tallest = max((chip.sizeHint().height() for chip in self._chips_kept()), default=0)
        self._strip.setFixedHeight(max(tallest, MIN_CHIP_HEIGHT) + 10)
        self._strip.setVisible(count > 0)
        self._show_count()
        self._update_buttons()
        self.attachments_changed.emit(count)

    def _show_count(self) -> None:
        count = len(self._attachments)
        parts = [f"{count} image{'s' if count != 1 else ''}"] if count else []
        regions = len(self.marks.for_images(self._attachments))
        parts += [regions_said(regions)] if regions else []  # the next question is about them
        # While an answer runs, reading ahead is not what happens ("Ready" beside Stop lied).
        hint = "" if self._generating else self._hint
        parts += [hint] if hint else []
        self.count_label.setText(" · ".join(parts))
        self.count_label.set_tip(
            "Read ahead while you type: the answer starts as soon as you send" if hint else ""
        )

    def _update_buttons(self) -> None:
        has_images = bool(self._attachments)
        buttons = [*self.preset_buttons.values(), self.own_presets_button, self.ask_menu_button]
        for button in buttons:
            button.setEnabled(has_images and not self._generating)
        self.ground_check.setVisible(has_images)
        has_input = bool(self.editor.toPlainText().strip()) or has_images
        self.send_button.setEnabled(self._generating or has_input)
