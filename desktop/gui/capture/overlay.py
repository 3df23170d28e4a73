"""The capture overlay: every screen frozen under a full-screen window that picks a region.

Drag a rectangle; a click without drag takes the window under the cursor (where the platform
lists windows, else the whole screen); Esc cancels. The crop is cut from the frozen picture at
the screen's device pixels, so a 200 % screen gives twice the logical size, as it shows it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from PySide6.QtCore import QObject, QPoint, QRect, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from desktop.gui.capture.frozen import FrozenScreen

OVERLAY_TITLE = "DeskLens capture"
DRAG_MIN = 4  # logical px: less is a click
HINT = "Drag over the text · click a window to take it · Esc cancels · Shift: the other action"
# The hint line for the action a release without Shift takes: "ask" opens the box picker on
# the crop next (widgets/region_picker.py), which the line says, so the boxes are found.
HINTS = {
    "copy": "Drag over the text to copy it · a click takes a window · Esc cancels · "
    "Shift: ask about it instead (and mark boxes in it)",
    "ask": "Drag over what to ask about; next you can mark boxes in it · a click takes a "
    "window · Esc cancels · Shift: copy its text instead",
}
# Set by `desklens capture --ask` without an open window (standalone.py) for the app it starts:
# that app's capture flow opens the box picker on the capture file once it is attached.
PICK_BOXES_ENV = "DESKLENS_CAPTURE_BOXES"


def hint_for(action: str) -> str:
    """The overlay's hint line when a plain release does `action` ("copy" or "ask")."""
    return HINTS.get(action, HINT)


@dataclass(frozen=True)
class Capture:
    image: QImage  # the crop, in device pixels
    area: QRect  # where it was on its screen's picture, in device pixels
    modifiers: Qt.KeyboardModifier  # held when the mouse was released
    whole_window: bool = False  # a click took a window (or the screen)


def device_rect(logical: QRect, scale: float) -> QRect:
    """A logical rectangle in device pixels, grown outwards to whole pixels."""
    left, top = math.floor(logical.x() * scale), math.floor(logical.y() * scale)
    right = math.ceil((logical.x() + logical.width()) * scale)
    bottom = math.ceil((logical.y() + logical.height()) * scale)
    return QRect(left, top, right - left, bottom - top)


class CaptureOverlay(QWidget):
    """One screen's frozen picture, dimmed outside the selection."""

    dragged = Signal(QRect, object)  # the selection in this widget's logical pixels, modifiers
    clicked = Signal(QPoint, object)  # where, in logical pixels, modifiers
    cancelled = Signal()
    painted = Signal()

    def __init__(self, frozen: FrozenScreen, hint: str = HINT) -> None:
        flags = Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
        super().__init__(None, flags | Qt.WindowType.Tool)
        self.frozen = frozen
        self.hint = hint
        self.setObjectName("captureOverlay")
        self.setWindowTitle(OVERLAY_TITLE)
        self.setAccessibleName("Screen capture")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setMouseTracking(True)
        self._start: QPoint | None = None
        self._end: QPoint | None = None

    def open(self) -> None:
        # A screen unplugged (or set up again by the display server) since the grab is gone:
        # the overlay still opens where that screen was, by its geometry.
        if isValid(self.frozen.screen):
            self.setScreen(self.frozen.screen)
        self.setGeometry(self.frozen.geometry)
        self.showFullScreen()
        self.raise_()
        self.activateWindow()

    def selection(self) -> QRect:
        if self._start is None or self._end is None:
            return QRect()
        # From the press to the release, the release's pixel not included (QRect(p, q)
        # would count both ends).
        left, right = sorted((self._start.x(), self._end.x()))
        top, bottom = sorted((self._start.y(), self._end.y()))
        return QRect(left, top, right - left, bottom - top)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._start = self._end = event.position().toPoint()
        elif event.button() == Qt.MouseButton.RightButton:
            self.cancelled.emit()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._start is not None:
            self._end = event.position().toPoint()
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._start is None:
            return
        self._end = event.position().toPoint()
        selection, modifiers = self.selection(), event.modifiers()
        if selection.width() < DRAG_MIN and selection.height() < DRAG_MIN:
            self.clicked.emit(self._end, modifiers)
        else:
            self.dragged.emit(selection, modifiers)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.cancelled.emit()

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        image = self.frozen.image
        painter.drawImage(QRectF(self.rect()), image, QRectF(image.rect()))
        painter.fillRect(self.rect(), QColor(0, 0, 0, 90))
        selection = self.selection()
        if not selection.isEmpty():
            source = device_rect(selection, self.frozen.scale)
            painter.drawImage(QRectF(selection), image, QRectF(source))
            painter.setPen(QPen(QColor("#4c8dff"), 2))
            painter.drawRect(selection.adjusted(0, 0, -1, -1))
        self._paint_hint(painter)
        painter.end()
        self.painted.emit()

    def _paint_hint(self, painter: QPainter) -> None:
        metrics = painter.fontMetrics()
        box = metrics.boundingRect(self.hint).adjusted(-14, -8, 14, 8)
        box.moveCenter(QPoint(self.width() // 2, 40))
        painter.fillRect(box, QColor(20, 20, 20, 220))
        painter.setPen(QColor("white"))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, self.hint)


class RegionPicker(QObject):
    """Overlays on every screen for one capture; `picked` or `cancelled` ends it."""

    picked = Signal(Capture)
    cancelled = Signal()
    shown = Signal()  # every overlay has been painted: the user sees the frozen screens

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.overlays: list[CaptureOverlay] = []
        self._windows: list[QRect] = []
        self._unpainted: set[int] = set()

    @property
    def active(self) -> bool:
        return bool(self.overlays)

    def start(self, frozen: list[FrozenScreen], windows: list[QRect], hint: str = HINT) -> None:
        """`windows`: top-level windows in desktop device pixels, topmost first; `hint`: the
        line on every screen (`hint_for` the action)."""
        self.close()
        self._windows = windows
        for shot in frozen:
            overlay = CaptureOverlay(shot, hint)
            overlay.dragged.connect(lambda rect, mods, o=overlay: self._take(o, rect, mods))
            overlay.clicked.connect(lambda point, mods, o=overlay: self._click(o, point, mods))
            overlay.cancelled.connect(self.cancel)
            overlay.painted.connect(lambda o=overlay: self._on_painted(o))
            self.overlays.append(overlay)
        self._unpainted = {id(overlay) for overlay in self.overlays}
        for overlay in self.overlays:
            overlay.open()
        if self.overlays:
            self.overlays[0].grabKeyboard()  # Esc reaches us whichever screen has the mouse

    def cancel(self) -> None:
        if self.active:
            self.close()
            self.cancelled.emit()

    def close(self) -> None:
        overlays, self.overlays = self.overlays, []
        for overlay in overlays:
            overlay.releaseKeyboard()
            overlay.close()

    def _on_painted(self, overlay: CaptureOverlay) -> None:
        if id(overlay) in self._unpainted:
            self._unpainted.discard(id(overlay))
            if not self._unpainted:
                self.shown.emit()

    def _take(self, overlay: CaptureOverlay, logical: QRect, modifiers: object) -> None:
        area = device_rect(logical, overlay.frozen.scale)
        self._finish(overlay, area, modifiers, whole_window=False)

    def _click(self, overlay: CaptureOverlay, point: QPoint, modifiers: object) -> None:
        frozen = overlay.frozen
        scale = frozen.scale
        origin = QPoint(round(frozen.geometry.x() * scale), round(frozen.geometry.y() * scale))
        on_desktop = origin + QPoint(round(point.x() * scale), round(point.y() * scale))
        screen_area = frozen.image.rect()
        area = screen_area
        for window in self._windows:
            if window.contains(on_desktop):
                area = window.translated(-origin).intersected(screen_area)
                break
        self._finish(overlay, area, modifiers, whole_window=True)

    def _finish(
        self, overlay: CaptureOverlay, area: QRect, modifiers: object, *, whole_window: bool
    ) -> None:
        area = area.intersected(overlay.frozen.image.rect())
        crop = overlay.frozen.image.copy(area)
        crop.setDevicePixelRatio(1.0)  # the pixels are what matters from here on
        self.close()
        if crop.isNull() or area.isEmpty():
            self.cancelled.emit()
            return
        self.picked.emit(Capture(crop, area, Qt.KeyboardModifier(modifiers), whole_window))
