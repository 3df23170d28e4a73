"""Getting pictures into the composer: drop, paste, Attach (Ctrl+O) and files handed over
by `desklens FILE`. Decoding runs in the intake's thread pool; the chips appear when done."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QObject, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from desktop.gui.widgets.basics import bring_to_front
from desktop.gui.widgets.composer import Composer
from desktop.gui.widgets.drop import DropHandler, choose_files
from desktop.gui.widgets.notice import Notice
from desktop.gui.workers.intake import Intake, IntakeRequest, IntakeResult, request_from_mime


class AttachFlow(QObject):
    def __init__(
        self, composer: Composer, notice: Notice, drop: DropHandler, window: QWidget
    ) -> None:
        super().__init__(window)
        self._composer = composer
        self._notice = notice
        self._window = window  # the file dialog's parent, raised when files are handed over
        self.intake = Intake(self)
        self.intake.loaded.connect(self._on_intake)
        drop.dropped.connect(self.intake.submit)
        composer.attach_requested.connect(self.attach_files)
        composer.mime_pasted.connect(self.paste_mime)

    @Slot()
    def attach_files(self) -> None:
        self.intake.submit(choose_files(self._window))

    @Slot(list)
    def open_files(self, paths: list) -> None:
        """Files from the command line or "Open with": attached as if dropped, and the
        window comes to the front (when another `desklens FILE` handed them over)."""
        if paths:
            self.intake.submit(IntakeRequest(paths=[Path(path) for path in paths]))
        bring_to_front(self._window)

    @Slot(QMimeData)
    def paste_mime(self, mime: QMimeData) -> None:
        self.intake.submit(request_from_mime(mime, pasted=True))

    @Slot()
    def paste_clipboard(self) -> None:
        mime = QGuiApplication.clipboard().mimeData()
        if mime is not None:
            self.paste_mime(mime)

    @Slot(object)
    def _on_intake(self, result: IntakeResult) -> None:
        if result.images:
            self._composer.add_images(result.images)
            self._composer.focus_editor()
        messages = result.messages()
        if messages:
            self._notice.show_message(" ".join(messages), error=not result.images)
