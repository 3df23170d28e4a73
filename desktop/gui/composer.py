"""The question box: text, attached images, one-click presets, and Send that becomes Stop."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QKeyEvent, QResizeEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.presets import PRESETS, Preset
from desktop.gui.icons import line_icon
from desktop.gui.image_ref import ImageRef
from desktop.gui.intake import can_attach
from desktop.gui.theme import current_theme
from desktop.gui.widgets import Thumbnail, push_button, set_role

ATTACHMENT_EDGE = 64
MAX_EDITOR_LINES = 8
PLACEHOLDER = "Ask about your screenshots…  (Enter sends, Shift+Enter adds a line)"
PRESET_TIPS = {
    "text": "Ask the AI to transcribe all text in the attached images",
    "markdown": "Ask the AI to convert the attached images to Markdown",
    "json": "Ask the AI for the fields in the attached images as JSON",
    "describe": "Ask the AI to describe the attached images",
}


class ComposerEdit(QPlainTextEdit):
    """Enter sends, Shift+Enter breaks the line; pasted or dragged images go to the owner."""

    submitted = Signal()
    mime_pasted = Signal(QMimeData)

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("composerEdit")
        self.setAccessibleName("Question")
        self.setPlaceholderText(PLACEHOLDER)
        self.setTabChangesFocus(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.document().documentLayout().documentSizeChanged.connect(self._fit_height)
        self._fit_height()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        is_enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        plain = not event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if is_enter and plain:
            self.submitted.emit()
            return
        if is_enter:  # Shift+Enter: QPlainTextEdit would insert a line separator (U+2028)
            self.insertPlainText("\n")
            return
        super().keyPressEvent(event)

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return can_attach(source) or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        if can_attach(source):
            self.mime_pasted.emit(source)
        else:
            super().insertFromMimeData(source)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if can_attach(event.mimeData()):
            event.ignore()  # the window shows its drop overlay and takes the drop
        else:
            super().dragEnterEvent(event)

    def _fit_height(self, *_args) -> None:
        line = self.fontMetrics().lineSpacing()
        lines = max(1, min(MAX_EDITOR_LINES, int(self.document().size().height())))
        margins = int(self.document().documentMargin() * 2) + 4
        self.setFixedHeight(max(2, lines) * line + margins)


class AttachmentChip(Thumbnail):
    """An attached image with a remove button."""

    remove_requested = Signal(object)

    def __init__(self, ref: ImageRef) -> None:
        super().__init__(ref, ATTACHMENT_EDGE)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.close_button = QToolButton(self)
        self.close_button.setText("×")
        self.close_button.setObjectName("chipClose")
        self.close_button.setToolTip(f"Remove {ref.name}")
        self.close_button.setAccessibleName(f"Remove {ref.name}")
        self.close_button.setFixedSize(QSize(18, 18))
        self.close_button.clicked.connect(lambda: self.remove_requested.emit(self.ref))
        remove = QAction("Remove", self)
        remove.triggered.connect(lambda: self.remove_requested.emit(self.ref))
        self.addAction(remove)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.close_button.move(self.width() - self.close_button.width() - 2, 2)


class Composer(QFrame):
    send_requested = Signal(str, list)  # question, [ImageRef]
    preset_requested = Signal(str, list)  # preset key, [ImageRef]
    stop_requested = Signal()
    attach_requested = Signal()
    mime_pasted = Signal(QMimeData)
    view_requested = Signal(object)  # ImageRef
    extract_requested = Signal(object)  # ImageRef
    attachments_changed = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("composer")
        self._attachments: list[ImageRef] = []
        self._generating = False
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)

        self._strip = QScrollArea()
        self._strip.setWidgetResizable(True)
        self._strip.setFrameShape(QFrame.Shape.NoFrame)
        self._strip.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._strip.setFixedHeight(ATTACHMENT_EDGE + 10)
        self._strip.setStyleSheet("background: transparent;")
        strip_content = QWidget()
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

        row = QHBoxLayout()
        row.setSpacing(6)
        self.attach_button = QToolButton()
        self.attach_button.setProperty("role", "flat")
        self.attach_button.setToolTip("Attach images or PDFs")
        self.attach_button.setAccessibleName("Attach images")
        self.attach_button.setIconSize(QSize(20, 20))
        self.attach_button.clicked.connect(self.attach_requested)
        row.addWidget(self.attach_button)
        self.count_label = QLabel()
        self.count_label.setObjectName("muted")
        row.addWidget(self.count_label)
        self.hint_label = QLabel()  # "Reading the image…" / "Ready": see preparing.py
        self.hint_label.setObjectName("muted")
        self.hint_label.setAccessibleName("Reading ahead")
        row.addWidget(self.hint_label)
        self.presets_label = QLabel("Ask AI:")
        self.presets_label.setObjectName("muted")
        row.addSpacing(6)
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
        row.addStretch(1)
        self.send_button = push_button("Send", "primary", "Send the question (Enter)")
        self.send_button.setIconSize(QSize(16, 16))
        self.send_button.clicked.connect(self._on_send_clicked)
        row.addWidget(self.send_button)
        layout.addLayout(row)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
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
            chip.insertAction(chip.actions()[0] if chip.actions() else None, extract)
            self._strip_layout.insertWidget(self._strip_layout.count() - 1, chip)
        self._attachments_changed()

    def remove_image(self, ref: ImageRef) -> None:
        self._attachments = [r for r in self._attachments if r is not ref]
        for chip in self.chips():
            if chip.ref is ref:
                self._strip_layout.removeWidget(chip)
                chip.deleteLater()
        self._attachments_changed()

    def clear_images(self) -> None:
        for ref in list(self._attachments):
            self.remove_image(ref)

    def chips(self) -> list[AttachmentChip]:
        return self._strip.widget().findChildren(AttachmentChip)

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
        self.own_presets_button.setVisible(bool(presets))

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

    def refresh_icons(self) -> None:
        theme = current_theme()
        self.attach_button.setIcon(line_icon("attach", theme.muted))
        name = "stop" if self._generating else "send"
        self.send_button.setIcon(line_icon(name, theme.accent_text))

    def set_hint(self, text: str) -> None:
        """A quiet note next to the image count (empty hides it)."""
        self.hint_label.setText(f"· {text}" if text and self._attachments else text)
        self.hint_label.setToolTip(
            "Read ahead while you type: the answer starts as soon as you send" if text else ""
        )
        self.hint_label.setVisible(bool(text))

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
        self.clear_images()
        self.send_requested.emit(question, images)

    def _on_preset(self, key: str) -> None:
        if self._generating or not self._attachments:
            return
        images = self.attachments()
        self.clear_images()
        self.preset_requested.emit(key, images)

    def _attachments_changed(self) -> None:
        count = len(self._attachments)
        self._strip.setVisible(count > 0)
        self.count_label.setText(f"{count} image{'s' if count != 1 else ''}" if count else "")
        self._update_buttons()
        self.attachments_changed.emit(count)

    def _update_buttons(self) -> None:
        has_images = bool(self._attachments)
        for button in [*self.preset_buttons.values(), self.own_presets_button]:
            button.setEnabled(has_images and not self._generating)
        self.ground_check.setVisible(has_images)
        has_input = bool(self.editor.toPlainText().strip()) or has_images
        self.send_button.setEnabled(self._generating or has_input)
