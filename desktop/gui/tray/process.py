"""What the `desklens tray` process does for its menu and its global shortcut.

An open DeskLens window does the capture when there is one (`desklens capture`'s handoff over
the OCR service: its warm OCR, its note). Otherwise this process captures with the same
overlay as `desklens capture` (grab.py, overlay.py): "copy" reads the region off the GUI
thread (reader.py), puts the text on the clipboard (this long-lived process keeps serving it)
and shows the capture note; "ask" hands the crop to an open window or starts the app with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtGui import QGuiApplication, QImage

from desktop.core.ocr.service import ask_open_app_to_capture, default_endpoint, hand_to_open_app
from desktop.gui.capture.frozen import Done, Failed, FrozenScreen
from desktop.gui.capture.grab import grab_screens
from desktop.gui.capture.open_app import CropNotSaved, Launch, launch_desklens, open_app_with
from desktop.gui.capture.overlay import Capture, RegionPicker
from desktop.gui.capture.toast import CaptureToast, first_line
from desktop.gui.capture.windows import visible_windows
from desktop.gui.settings import SettingsStore
from desktop.gui.tray.reader import ReadResult, TextReader
from desktop.gui.widgets.thumbnails import qimage_to_png

logger = logging.getLogger(__name__)

Grab = Callable[[Done, Failed], None]


def chosen_action(mode: str, setting: str, modifiers: Qt.KeyboardModifier) -> str:
    """The capture's action: the mode asked for, else the setting; Shift held on release
    picks the other one (as in the window's capture)."""
    action = mode or setting
    if modifiers & Qt.KeyboardModifier.ShiftModifier:
        action = "ask" if action == "copy" else "copy"
    return action


class TrayProcess(QObject):
    """The TrayTarget of `desklens tray`. The signals say what each capture came to."""

    handed_over = Signal(str)  # an open window took the capture (its mode)
    overlay_shown = Signal()
    copied = Signal(str)  # the text put on the clipboard ("" when the region had none)
    attached = Signal(str)  # the crop's file, handed to the app
    cancelled = Signal()
    failed = Signal(str)

    def __init__(
        self,
        data_dir: Path,
        *,
        grab: Grab = grab_screens,
        launch: Launch = launch_desklens,
        quit_app: Callable[[], None] = QCoreApplication.quit,
    ) -> None:
        super().__init__()
        self._data_dir = data_dir
        self._endpoint = default_endpoint(data_dir)
        self._grab = grab
        self._launch = launch
        self._quit = quit_app
        self._mode = ""
        self.picker = RegionPicker(self)
        self.picker.shown.connect(self.overlay_shown)
        self.picker.picked.connect(self._on_picked)
        self.picker.cancelled.connect(self.cancelled)
        self.toast = CaptureToast()
        self.reader = TextReader(self._endpoint, self)
        self.reader.done.connect(self._on_read)
        self._reading: QImage | None = None  # the crop being read, for the note's Show

    def capture(self, mode: str) -> None:
        if self.picker.active or self._reading is not None:
            return  # one capture at a time: a held or repeated shortcut starts no second
        if ask_open_app_to_capture(mode, self._endpoint):
            logger.info("The open DeskLens window takes the capture")
            self.handed_over.emit(mode)
            return
        self._mode = mode
        self._grab(self._show_overlay, self._on_failed)

    def open_app(self) -> None:
        if not hand_to_open_app([], self._endpoint):
            self._launch(["gui"], {})

    def quit(self) -> None:
        self.picker.close()
        self.toast.hide()
        self.reader.close()
        self._quit()

    def _show_overlay(self, frozen: list[FrozenScreen]) -> None:
        logger.info("Capture overlay shown")
        self.picker.start(frozen, visible_windows())

    def _on_picked(self, capture: Capture) -> None:
        setting = SettingsStore(self._data_dir).load().capture_action
        if chosen_action(self._mode, setting, capture.modifiers) == "ask":
            self._open_with(capture.image)
            return
        self._reading = capture.image
        self.reader.read(qimage_to_png(capture.image))

    def _on_read(self, result: ReadResult) -> None:
        crop, self._reading = self._reading, None
        # Show: the window with the crop's text in the chat (docs/GUI.md), not the box picker.
        show = (lambda: self._open_with(crop, extract=True)) if crop is not None else self.open_app
        if result.text is None:
            self._on_failed(result.error)
            return
        text = result.text.strip("\n")
        clipboard = QGuiApplication.clipboard()
        if not text.strip():
            self.toast.show_result("No text found in the region.", None, undo=None, show=show)
            self.copied.emit("")
            return
        previous = clipboard.text()
        clipboard.setText(text)
        logger.info("Copied the region's text (%d characters)", len(text))  # never the text
        self.toast.show_result(
            f"Copied: {first_line(text)}",
            None,
            undo=lambda: clipboard.setText(previous),
            show=show,
        )
        self.copied.emit(text)

    def _open_with(self, image: QImage, *, extract: bool = False) -> None:
        """The crop into the chat (`extract`: with its text): the open window takes it, else
        the app starts with it."""
        endpoint = self._endpoint
        try:
            path = open_app_with(
                image,
                self._launch,
                lambda path: hand_to_open_app([path], endpoint, extract=extract),
                extract=extract,
            )
        except CropNotSaved as error:
            self._on_failed(f"The capture could not be saved in {error.path.parent}.")
            return
        self.attached.emit(str(path))

    def _on_failed(self, sentence: str) -> None:
        logger.warning("%s", sentence)
        self.toast.show_result(sentence, None, undo=None, show=self.open_app)
        self.failed.emit(sentence)
