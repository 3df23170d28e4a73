"""Capture a screen region straight into the OCR or the chat (the Capture button, Ctrl+Shift+S,
and `desklens capture` handed over by the OCR service).

Two outcomes, by Settings > "Capture" and the Shift key held when the mouse is released
(Shift does the other one): **copy the text** (the fast OCR on the OCR thread, the text on
the clipboard, a note in the screen's corner with the first line, Undo and Show) or **ask
about it** (the crop attached to the composer like a pasted picture, the window raised, and
the box picker of attached images opened on it: boxes drawn there go with the next question
as `desklens ask --region` sends them; Esc skips them).
Either way the crop goes through the intake's thread pool, as pasted pictures do, and the
OCR worker stores the extraction: the GUI thread writes nothing.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import QComboBox, QPushButton, QWidget

from desktop.gui.capture.frozen import FrozenScreen
from desktop.gui.capture.grab import grab_screens
from desktop.gui.capture.open_app import EXTRACT_ENV
from desktop.gui.capture.overlay import PICK_BOXES_ENV, Capture, RegionPicker, hint_for
from desktop.gui.capture.toast import CaptureToast, first_line
from desktop.gui.capture.windows import visible_windows
from desktop.gui.flows.asking import ChatParts
from desktop.gui.flows.extraction import ExtractionFlow
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import bring_to_front
from desktop.gui.widgets.region_picker import RegionDialog
from desktop.gui.workers.intake import Intake, IntakeRequest, IntakeResult
from desktop.gui.workers.ocr_worker import OcrController, OcrOutcome

SHORTCUT = "Ctrl+Shift+S"
# The window hides before the screens are frozen, so that it is not in the picture; the
# compositor needs a moment to take it off the screen (there is no signal for that).
HIDE_DELAY_MS = 250
ACTIONS = {"copy": "Copy the text", "ask": "Ask about it"}
BOXES_NOTE = (
    "Mark what to ask about in the capture, or press Esc to ask about all of it. The boxes go "
    "with your next question."
)


def capture_action_combo(current: str) -> QComboBox:
    """Settings > Capture: what a capture does without Shift."""
    combo = QComboBox()
    combo.setAccessibleName("Capture")
    for action, label in ACTIONS.items():
        combo.addItem(f"{label} (Shift: the other)", action)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


class CaptureFlow(QObject):
    overlay_shown = Signal()  # the frozen screens are up
    copied = Signal(str)  # the text put on the clipboard
    attached = Signal(ImageRef)  # the crop, in the composer
    cancelled = Signal()
    failed = Signal(str)

    def __init__(
        self,
        parts: ChatParts,
        ocr: OcrController,
        extraction: ExtractionFlow,
        button: QPushButton,
        window: QWidget,
    ) -> None:
        super().__init__(window)
        self._parts = parts
        self._extraction = extraction
        self._window = window
        self._mode = ""  # of the capture under way
        self._restore_window = False
        self._copying: set[int] = set()  # id() of the crops whose text goes to the clipboard
        self.last_capture: Capture | None = None
        self.boxes_dialog: RegionDialog | None = None  # on the last crop asked about, if open
        self.picker = RegionPicker(self)
        self.picker.shown.connect(self.overlay_shown)
        self.picker.picked.connect(self._on_picked)
        self.picker.cancelled.connect(self._on_cancelled)
        self.toast = CaptureToast()
        ocr.extracted.connect(self._on_extracted)
        ocr.capture_requested.connect(self.start_for_command_line)
        button.clicked.connect(lambda: self.start())
        shortcut = QShortcut(QKeySequence(SHORTCUT), window, lambda: self.start())
        shortcut.setWhatsThis("Capture a screen region")
        self._handed_capture = os.environ.pop(PICK_BOXES_ENV, "")  # this process's only
        if self._handed_capture:
            parts.composer.attachments_changed.connect(self._on_handed_attached)
        # Crops whose text the tray's note's Show asks for (by file name), once attached.
        self._to_extract: set[str] = set()
        if handed := os.environ.pop(EXTRACT_ENV, ""):
            self.extract_when_attached([handed])
        ocr.extract_requested.connect(self.extract_when_attached)
        parts.composer.attachments_changed.connect(self._extract_handed)

    @Slot()
    def start(self, mode: str = "", *, hide_window: bool = True) -> None:
        """`mode`: "copy", "ask", or "" for the setting. From the window's own button the
        window steps aside first; a `desklens capture` leaves it where it is."""
        if self.picker.active:
            return
        if self.boxes_dialog is not None:  # a new capture: the last one's boxes are skipped
            self.boxes_dialog.reject()
        self._mode = mode if mode in ACTIONS else ""
        window = self._window
        self._restore_window = hide_window and window.isVisible() and not window.isMinimized()
        if self._restore_window:
            window.hide()
            QTimer.singleShot(HIDE_DELAY_MS, self._grab)
        else:
            self._grab()

    @Slot(str)
    def start_for_command_line(self, mode: str) -> None:
        """`desklens capture` (from a system shortcut): the window stays where it is."""
        self.start(mode, hide_window=False)

    def _grab(self) -> None:
        grab_screens(self._show_overlay, self._on_failed)

    def _show_overlay(self, frozen: list[FrozenScreen]) -> None:
        action = self._mode or self._parts.settings().capture_action
        self.picker.start(frozen, visible_windows(), hint_for(action))

    def _action(self, modifiers: Qt.KeyboardModifier) -> str:
        action = self._mode or self._parts.settings().capture_action
        if modifiers & Qt.KeyboardModifier.ShiftModifier:
            action = "ask" if action == "copy" else "copy"
        return action

    @Slot(object)
    def _on_picked(self, capture: Capture) -> None:
        self.last_capture = capture
        action = self._action(capture.modifiers)
        name = f"capture {time.strftime('%H-%M-%S')}.png"
        if action == "ask":
            self._show_window()
        else:
            self._put_window_back()
        # Decoded in the intake's pool, as a pasted picture is; one intake per capture, so
        # each result meets the action chosen for it.
        intake = Intake(self)
        intake.loaded.connect(lambda result: self._on_decoded(intake, result, action))
        intake.submit(IntakeRequest(pictures=[(capture.image, name)]))

    def _on_decoded(self, intake: Intake, result: IntakeResult, action: str) -> None:
        intake.deleteLater()
        if not result.images:
            self._on_failed(" ".join(result.messages()) or "The capture could not be read.")
        elif action == "ask":
            self._parts.composer.add_images(result.images)  # then read ahead like any image
            self._parts.composer.focus_editor()
            self.pick_boxes(result.images[0])
            self.attached.emit(result.images[0])
        else:
            self._copying.update(id(ref) for ref in result.images)
            self._extraction.extract_text(result.images)  # the OCR thread reads and stores it

    def pick_boxes(self, crop: ImageRef) -> RegionDialog | None:
        """Opens the attached images' box picker on a crop asked about (the composer's
        "Ask about a region…"), with a line saying why it opened and that Esc skips it."""
        composer = self._parts.composer
        # The composer keeps one copy of a picture: the same region captured again is that.
        ref = next((r for r in composer.attachments() if r.digest == crop.digest), None)
        if ref is None:
            return None
        dialog = composer.pick_regions(ref)
        dialog.set_note(BOXES_NOTE)
        self.boxes_dialog = dialog
        dialog.finished.connect(lambda _result, d=dialog: self._boxes_done(d))
        return dialog

    def _boxes_done(self, dialog: RegionDialog) -> None:
        if self.boxes_dialog is dialog:
            self.boxes_dialog = None

    @Slot(int)
    def _on_handed_attached(self, _count: int) -> None:
        """The capture file `desklens capture --ask` started this app with is attached."""
        path = Path(self._handed_capture)
        for ref in self._parts.composer.attachments():
            if ref.path is not None and ref.path.name == path.name:
                self._parts.composer.attachments_changed.disconnect(self._on_handed_attached)
                self._handed_capture = ""
                self.pick_boxes(ref)
                return

    @Slot(list)
    def extract_when_attached(self, paths: list[str]) -> None:
        self._to_extract |= {Path(path).name for path in paths}

    @Slot(int)
    def _extract_handed(self, _count: int) -> None:
        for ref in self._parts.composer.attachments():
            if ref.path is not None and ref.path.name in self._to_extract:
                self._to_extract.discard(ref.path.name)
                self._extraction.extract_text([ref])

    @Slot(object)
    def _on_extracted(self, outcome: OcrOutcome) -> None:
        if id(outcome.image) not in self._copying:
            return
        self._copying.discard(id(outcome.image))
        if outcome.text is None:
            self._on_failed(outcome.error or "The text could not be read.")
            return
        self._copy(outcome.text.text, outcome.image)

    def _copy(self, text: str, image: ImageRef) -> None:
        clipboard = QGuiApplication.clipboard()
        if not text.strip():
            self.toast.show_result(
                f"No text found in {image.name}.", None, undo=None, show=self._show_window
            )
            self.copied.emit("")
            return
        previous = clipboard.text()
        clipboard.setText(text)
        self.toast.show_result(
            f"Copied: {first_line(text)}",
            None,
            undo=lambda: clipboard.setText(previous),
            show=self._show_window,
        )
        self.copied.emit(text)

    @Slot()
    def _on_cancelled(self) -> None:
        self._put_window_back()
        self.cancelled.emit()

    def _on_failed(self, sentence: str) -> None:
        self._show_window()
        self._parts.notice.show_message(sentence, error=True)
        self.failed.emit(sentence)

    def _put_window_back(self) -> None:
        if self._restore_window:
            self._restore_window = False
            self._window.show()

    def _show_window(self) -> None:
        self._restore_window = False
        bring_to_front(self._window)
