"""Boxes outlined on an image's pixmap: the regions a question was about, and the lines of
the image that its answer quotes (its evidence)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap

Corners = tuple[int, int, int, int]  # left, top, right, bottom in the image's pixels

REGION_COLOUR = QColor(255, 64, 129)  # a magenta that stands out on light and dark pages
EVIDENCE_COLOUR = QColor(0, 170, 90)  # green: "found here", apart from the regions' magenta
FLASH_COLOUR = QColor(255, 196, 0)  # amber: the line a click in the answer points at


@dataclass(frozen=True)
class Marks:
    """What the image viewer outlines on an image: its question's regions, the lines the
    answer quotes, and the one line to flash (a figure of the answer clicked)."""

    regions: tuple[Corners, ...] = ()
    evidence: tuple[Corners, ...] = ()
    flash: Corners | None = None

    def layers(self) -> list[tuple[Sequence[Corners], QColor]]:
        return [(self.regions, REGION_COLOUR), (self.evidence, EVIDENCE_COLOUR)]


def draw_boxes(painter: QPainter, boxes: Sequence[Corners], scale: float, colour: QColor) -> None:
    painter.setPen(QPen(colour, 2))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for left, top, right, bottom in boxes:
        painter.drawRect(
            QRectF(left * scale, top * scale, (right - left) * scale, (bottom - top) * scale)
        )


def outlined(
    pixmap: QPixmap, image_width: int, layers: Sequence[tuple[Sequence[Corners], QColor]]
) -> QPixmap:
    """A copy of `pixmap` (the whole image, scaled) with each layer's boxes drawn in its
    colour; `pixmap` itself when there is nothing to draw."""
    if not any(boxes for boxes, _colour in layers) or pixmap.isNull():
        return pixmap
    copy = pixmap.copy()
    copy.setDevicePixelRatio(pixmap.devicePixelRatio())
    scale = copy.width() / copy.devicePixelRatio() / max(1, image_width)
    painter = QPainter(copy)
    for boxes, colour in layers:
        draw_boxes(painter, boxes, scale, colour)
    painter.end()
    return copy
