"""An image at full size, scaled down to fit the window until the user asks for 100 %."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QPixmap, QResizeEvent, QShortcut
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import push_button
from desktop.gui.widgets.thumbnails import full_pixmap


class ImageViewer(QDialog):
    extract_requested = Signal(object)  # ImageRef

    def __init__(self, ref: ImageRef, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ref = ref
        self.setWindowTitle(f"{ref.name} — {ref.size[0]} × {ref.size[1]}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._pixmap: QPixmap = full_pixmap(ref)
        self._fit = True
        layout = QVBoxLayout(self)
        self.scroll_area = QScrollArea()
        self.scroll_area.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture = QLabel()
        self.picture.setAccessibleName(f"Image {ref.name}")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.scroll_area.setWidget(self.picture)
        self.scroll_area.setWidgetResizable(True)
        layout.addWidget(self.scroll_area, 1)
        buttons = QHBoxLayout()
        self.zoom_button = push_button("Actual size", tooltip="Toggle fit to window / 100 %")
        self.zoom_button.clicked.connect(self._toggle_fit)
        extract = push_button("Extract text", "primary", "Read the text of this image")
        extract.clicked.connect(self._extract)
        close = push_button("Close")
        close.clicked.connect(self.reject)
        buttons.addWidget(self.zoom_button)
        buttons.addStretch(1)
        buttons.addWidget(extract)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        QShortcut(QKeySequence("Ctrl+0"), self, self._toggle_fit)
        screen = self.screen().availableGeometry()
        self.resize(min(1100, int(screen.width() * 0.8)), min(800, int(screen.height() * 0.8)))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._show()

    def _extract(self) -> None:
        self.extract_requested.emit(self.ref)
        self.accept()

    def _toggle_fit(self) -> None:
        self._fit = not self._fit
        self.zoom_button.setText("Actual size" if self._fit else "Fit to window")
        self.scroll_area.setWidgetResizable(self._fit)
        self._show()

    def _show(self) -> None:
        if not self._fit:
            self.picture.setPixmap(self._pixmap)
            self.picture.adjustSize()
            return
        area = self.scroll_area.viewport().size()
        ratio = self.devicePixelRatioF()
        if (
            self._pixmap.width() <= area.width() * ratio
            and self._pixmap.height() <= area.height() * ratio
        ):
            scaled = self._pixmap
        else:
            scaled = self._pixmap.scaled(
                area * ratio,
                Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        scaled.setDevicePixelRatio(ratio)
        self.picture.setPixmap(scaled)
