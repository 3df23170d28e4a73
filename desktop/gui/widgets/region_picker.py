"""Asking about a part of an image: boxes the user drags on it, and the boxes drawn on the
image's thumbnails afterwards.

`RegionDialog` opens from an attached image ("Ask about a region…") and on a capture asked
about (gui/flows/capturing.py): drag to add a box (up to `MAX_REGIONS`), right-click a box to
remove it; from the keyboard, the arrows move a dashed box (Shift+arrows size it), Space adds
it, Delete removes the last one; Enter or a double-click confirms, Esc leaves the boxes as they
were. The boxes are kept in image pixels,
as `desktop/core/regions.py` takes them; the composer sends them with the next question
(`AskRequest.regions`), and each question's thumbnails show them (widgets/outlines.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPoint, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QFocusEvent,
    QGuiApplication,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLayout,
    QVBoxLayout,
    QWidget,
)

from desktop.core.regions import MAX_REGIONS, Region
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.outlines import REGION_COLOUR, draw_boxes
from desktop.gui.widgets.thumbnails import full_pixmap

MIN_BOX_PX = 4  # on the screen: a click (or a slip) is not a box
CANVAS_MAX = QSize(960, 640)  # the largest the dialog shows the image (never upscaled)
REGION_HINT = (
    "Drag to mark a region, or move the dashed box with the arrows (Shift: its size) and press "
    "Space; right-click or Delete removes a box. Enter or double-click: done."
)
TEXT_WIDTH = 420  # the dialog's wrapped lines are at least this wide, beside a small image
KEY_STEP_PX = 10  # on the screen: one arrow press moves or sizes the keyboard's box this far


def regions_said(count: int) -> str:
    """The count said: "1 region", "3 regions"."""
    return f"{count} region{'s' if count != 1 else ''}"


def region_on(image_index: int, boxes: Sequence[Region]) -> tuple[Region, ...]:
    """`boxes` (drawn on one image) as regions of the question's image `image_index`."""
    return tuple(Region(box.x, box.y, box.width, box.height, image_index) for box in boxes)


class RegionCanvas(QWidget):
    """The image, scaled to fit, where the user drags boxes; `boxes` are in image pixels."""

    changed = Signal()
    confirmed = Signal()  # a double-click: done

    def __init__(self, ref: ImageRef, boxes: Sequence[Region] = ()) -> None:
        super().__init__()
        self.ref = ref
        self.boxes: list[Region] = list(boxes)
        self._pixmap = full_pixmap(ref)
        width, height = ref.size
        # At most one image pixel per device pixel: a capture from a 200 % screen shows at the
        # size it had there (and fits the screen it came from), not twice as large.
        screen = QGuiApplication.primaryScreen()
        most = 1.0 / max(1.0, screen.devicePixelRatio() if screen is not None else 1.0)
        self.scale = min(most, CANVAS_MAX.width() / width, CANVAS_MAX.height() / height)
        self.setFixedSize(max(1, round(width * self.scale)), max(1, round(height * self.scale)))
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setAccessibleName(f"Image {ref.name}: drag to mark a region")
        self.setAccessibleDescription(REGION_HINT)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._start: QPoint | None = None
        self._current: QPoint | None = None
        # The keyboard's box (image pixels): shown while the canvas has the focus from the
        # keyboard (Tab, opening, an arrow); a mouse press hides it until a key is pressed.
        self.key_box = Region(width // 4, height // 4, max(1, width // 2), max(1, height // 2))
        self.keyboard = True

    def image_point(self, point: QPoint | QPointF) -> tuple[int, int]:
        """A point on the canvas in image pixels, kept inside the image."""
        width, height = self.ref.size
        x = min(max(round(point.x() / self.scale), 0), width)
        y = min(max(round(point.y() / self.scale), 0), height)
        return x, y

    def mousePressEvent(self, event: QMouseEvent) -> None:
        point = event.position().toPoint()
        self.keyboard = False
        if event.button() == Qt.MouseButton.RightButton:
            self._remove_at(point)
        elif event.button() == Qt.MouseButton.LeftButton and len(self.boxes) < MAX_REGIONS:
            self._start = self._current = point
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._start is not None:
            self._current = event.position().toPoint()
            self.update()
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        start, self._start = self._start, None
        if start is not None and event.button() == Qt.MouseButton.LeftButton:
            end = event.position().toPoint()
            if abs(end.x() - start.x()) >= MIN_BOX_PX and abs(end.y() - start.y()) >= MIN_BOX_PX:
                self._add(start, end)
        self._current = None
        self.update()
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._start = self._current = None
            self.confirmed.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, shift = event.key(), bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        steps = {Qt.Key.Key_Left: (-1, 0), Qt.Key.Key_Right: (1, 0),
                 Qt.Key.Key_Up: (0, -1), Qt.Key.Key_Down: (0, 1)}  # fmt: skip
        adds = key in (Qt.Key.Key_Space, Qt.Key.Key_Insert)
        if key in steps:
            self.keyboard = True
            self._move_key_box(*steps[Qt.Key(key)], resize=shift)
        elif adds and not self.keyboard:
            self.keyboard = True  # hidden since a drag: shown first, never added unseen
        elif adds and len(self.boxes) < MAX_REGIONS:
            self.boxes.append(self.key_box)
            self.changed.emit()
        elif key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and self.boxes:
            self.boxes.pop()
            self.changed.emit()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            # Done, as the double-click: the dialog's default button is not to be relied on
            # (it moves with the focus among the buttons).
            self.confirmed.emit()
            return
        else:
            super().keyPressEvent(event)  # Esc: the dialog's
            return
        self.update()

    def focusInEvent(self, event: QFocusEvent) -> None:
        if event.reason() != Qt.FocusReason.MouseFocusReason:
            self.keyboard = True
        self.update()  # the keyboard's box shows
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusOutEvent(event)

    def _move_key_box(self, dx: int, dy: int, *, resize: bool) -> None:
        """Moves the keyboard's box (or sizes it, keeping its top-left) by one step, inside
        the image and never smaller than a dragged box may be."""
        width, height = self.ref.size
        step = max(1, round(KEY_STEP_PX / self.scale))
        box, least = self.key_box, max(1, round(MIN_BOX_PX / self.scale))
        if resize:
            w = min(max(box.width + dx * step, least), width - box.x)
            h = min(max(box.height + dy * step, least), height - box.y)
            self.key_box = Region(box.x, box.y, w, h)
        else:
            x = min(max(box.x + dx * step, 0), width - box.width)
            y = min(max(box.y + dy * step, 0), height - box.height)
            self.key_box = Region(x, y, box.width, box.height)

    def clear(self) -> None:
        self.boxes.clear()
        self.changed.emit()
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.drawPixmap(self.rect(), self._pixmap)
        draw_boxes(painter, [box.corners for box in self.boxes], self.scale, REGION_COLOUR)
        painter.setPen(QPen(REGION_COLOUR, 1, Qt.PenStyle.DashLine))
        if self._start is not None and self._current is not None:
            painter.drawRect(QRectF(QPointF(self._start), QPointF(self._current)).normalized())
        elif self.hasFocus() and self.keyboard:
            left, top, right, bottom = (round(v * self.scale) for v in self.key_box.corners)
            painter.drawRect(QRectF(left, top, right - left - 1, bottom - top - 1))
        painter.end()

    def _add(self, start: QPoint, end: QPoint) -> None:
        (x1, y1), (x2, y2) = self.image_point(start), self.image_point(end)
        left, top = min(x1, x2), min(y1, y2)
        width, height = abs(x2 - x1), abs(y2 - y1)
        if width > 0 and height > 0:
            self.boxes.append(Region(left, top, width, height))
            self.changed.emit()

    def _remove_at(self, point: QPoint) -> None:
        x, y = self.image_point(point)
        inside = [
            box
            for box in self.boxes
            if box.x <= x <= box.x + box.width and box.y <= y <= box.y + box.height
        ]
        if inside:  # the smallest: a box inside another is the one meant
            self.boxes.remove(min(inside, key=lambda box: box.width * box.height))
            self.changed.emit()
            self.update()


class RegionDialog(QDialog):
    """Marks the regions of one attached image; `chosen` carries them (in image pixels) when
    the user confirms. Opened with `open()`: the window stays responsive."""

    chosen = Signal(ImageRef, tuple)  # tuple[Region, ...]

    def __init__(
        self, ref: ImageRef, boxes: Sequence[Region] = (), parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Ask about a region of {ref.name}")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.canvas = RegionCanvas(ref, boxes)
        layout = QVBoxLayout(self)
        # The wrapped lines get the canvas's width (at least TEXT_WIDTH) and the height they
        # need for it: a label wrapped beside the buttons left the dialog too short, and the
        # buttons were laid over the canvas's lower edge.
        self._text_width = max(self.canvas.width(), TEXT_WIDTH)
        self.note = self._wrapped_label()  # why the dialog opened by itself (a capture)
        self.note.hide()
        layout.addWidget(self.note)
        layout.addWidget(self.canvas, 0, Qt.AlignmentFlag.AlignCenter)
        self.hint = self._wrapped_label()
        self.hint.setObjectName("muted")
        layout.addWidget(self.hint)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.clear_button = buttons.addButton("Clear", QDialogButtonBox.ButtonRole.ResetRole)
        self.clear_button.clicked.connect(self.canvas.clear)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setDefault(True)
        self.canvas.confirmed.connect(self.accept)  # Enter or a double-click on the canvas
        self.canvas.setFocus()  # the arrows work at once
        layout.addWidget(buttons)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetFixedSize)
        self.canvas.changed.connect(self._show_count)
        self._show_count()

    def _wrapped_label(self) -> QLabel:
        label = QLabel()
        label.setWordWrap(True)
        label.setFixedWidth(self._text_width)
        return label

    def _set_text(self, label: QLabel, text: str) -> None:
        label.setText(text)
        label.setFixedHeight(label.heightForWidth(self._text_width))

    def set_note(self, text: str) -> None:
        self._set_text(self.note, text)
        self.note.setVisible(bool(text))

    def accept(self) -> None:
        self.chosen.emit(self.canvas.ref, tuple(self.canvas.boxes))
        super().accept()

    def _show_count(self) -> None:
        count = len(self.canvas.boxes)
        if count >= MAX_REGIONS:
            self._set_text(self.hint, f"{count} regions: the most one question can take.")
        elif count:
            self._set_text(self.hint, f"{regions_said(count)}. {REGION_HINT}")
        else:
            self._set_text(self.hint, REGION_HINT)
        self.clear_button.setEnabled(bool(count))


def regions_by_image(
    refs: Sequence[ImageRef], regions: Sequence[Region]
) -> list[tuple[ImageRef, tuple[Region, ...]]]:
    """A question's regions split by the image they are of (the inverse of `for_images`)."""
    return [(ref, tuple(r for r in regions if r.image == i)) for i, ref in enumerate(refs)]


class RegionMarks:
    """The boxes drawn on each attached image, until the question is sent."""

    def __init__(self) -> None:
        self._boxes: dict[int, tuple[Region, ...]] = {}  # by the ref's identity, as attached

    def of(self, ref: ImageRef) -> tuple[Region, ...]:
        return self._boxes.get(id(ref), ())

    def set(self, ref: ImageRef, boxes: tuple[Region, ...]) -> None:
        self._boxes[id(ref)] = boxes

    def drop(self, ref: ImageRef) -> None:
        self._boxes.pop(id(ref), None)

    def for_images(self, refs: Sequence[ImageRef]) -> tuple[Region, ...]:
        """The regions of the question asked about `refs`, each naming its image's index."""
        return tuple(
            region for index, ref in enumerate(refs) for region in region_on(index, self.of(ref))
        )[:MAX_REGIONS]
