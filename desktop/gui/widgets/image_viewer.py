"""An image at full size, scaled down to fit the window until the user asks for 100 %, with
its question's regions and its answer's evidence outlined; a line pointed at from the answer
pulses a few times and is scrolled into view (at 100 % when fitting makes it unreadable)."""

from __future__ import annotations

import math

from PySide6.QtCore import (
    QAbstractAnimation,
    QEvent,
    QObject,
    QRectF,
    Qt,
    QTimer,
    QVariantAnimation,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QKeySequence,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QShortcut,
)
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import push_button
from desktop.gui.widgets.outlines import FLASH_COLOUR, Corners, Marks, draw_boxes
from desktop.gui.widgets.thumbnails import full_pixmap

FLASH_MS = 1800
FLASH_PULSES = 3
READABLE_LINE_PX = 9  # a flashed line shown lower than this (a tall page fitted): 100 %


class MarkedPicture(QLabel):
    """The picture with its marks drawn over it (at any zoom); the flashed line pulses."""

    def __init__(self, image_width: int) -> None:
        super().__init__()
        self.image_width = max(1, image_width)
        self.marks = Marks()
        self.flash = QVariantAnimation(self)
        self.flash.setStartValue(0.0)
        self.flash.setEndValue(1.0)
        self.flash.setDuration(FLASH_MS)
        self.flash.valueChanged.connect(lambda _value: self.update())

    def set_marks(self, marks: Marks) -> None:
        self.marks = marks
        self.flash.stop()
        if marks.flash is not None:
            self.flash.start()
        self.update()

    def flashing(self) -> bool:
        return self.flash.state() == QAbstractAnimation.State.Running

    def box_rect(self, box: Corners) -> QRectF:
        """Where `box` (the image's pixels) is drawn, in this widget's coordinates."""
        pixmap = self.pixmap()
        size = pixmap.deviceIndependentSize()
        area = self.contentsRect()
        left = area.x() + (area.width() - size.width()) / 2
        top = area.y() + (area.height() - size.height()) / 2
        scale = size.width() / self.image_width
        return QRectF(
            left + box[0] * scale,
            top + box[1] * scale,
            (box[2] - box[0]) * scale,
            (box[3] - box[1]) * scale,
        )

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        pixmap = self.pixmap()
        if pixmap.isNull():
            return
        origin = self.box_rect((0, 0, self.image_width, 0))
        painter = QPainter(self)
        painter.translate(origin.topLeft())
        for boxes, colour in self.marks.layers():
            draw_boxes(painter, boxes, origin.width() / self.image_width, colour)
        painter.resetTransform()
        if self.marks.flash is not None:
            rect = self.box_rect(self.marks.flash).adjusted(-3, -3, 3, 3)
            if self.flashing():  # FLASH_PULSES times from clear to bright and back
                progress = float(self.flash.currentValue())
                fill = QColor(FLASH_COLOUR)
                fill.setAlphaF(0.5 * abs(math.sin(math.pi * FLASH_PULSES * progress)))
                painter.fillRect(rect, fill)
            painter.setPen(QPen(FLASH_COLOUR, 3))
            painter.drawRect(rect)  # stays outlined after the pulses
        painter.end()


class ImageViewer(QDialog):
    extract_requested = Signal(ImageRef)

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
        self.picture = MarkedPicture(ref.size[0])
        self.picture.setAccessibleName(f"Image {ref.name}")
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.scroll_area.setWidget(self.picture)
        self.scroll_area.setWidgetResizable(True)
        # Fitted to the viewport as laid out: the dialog's own resize comes before its layout
        # settles, and the picture was fitted to a viewport of 63-71 % of the final one.
        self.scroll_area.viewport().installEventFilter(self)
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

    @property
    def marks(self) -> Marks:
        return self.picture.marks

    def show_marks(self, marks: Marks) -> None:
        """Outlines `marks`; their flashed line pulses and is brought into view."""
        self.picture.set_marks(marks)
        if marks.flash is not None:
            QTimer.singleShot(0, self, self._bring_flash_into_view)  # once shown and laid out

    def _bring_flash_into_view(self) -> None:
        box = self.marks.flash
        if box is None:
            return
        if self._fit and self.picture.box_rect(box).height() < READABLE_LINE_PX:
            self._toggle_fit()  # 100 %: the line readable; the scroll area is resized later
            QTimer.singleShot(0, self, self._bring_flash_into_view)
            return
        centre = self.picture.box_rect(box).center()
        viewport = self.scroll_area.viewport()
        margin_x, margin_y = viewport.width() // 3, viewport.height() // 3
        self.scroll_area.ensureVisible(int(centre.x()), int(centre.y()), margin_x, margin_y)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.Resize and self._fit:
            self._show()
        return super().eventFilter(watched, event)

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


def open_viewer(parent: QWidget, ref: ImageRef) -> ImageViewer | None:
    """The viewer already open on `ref`'s image among `parent`'s, if one is."""
    viewers = parent.findChildren(ImageViewer)
    return next((v for v in viewers if v.isVisible() and v.ref.digest == ref.digest), None)
