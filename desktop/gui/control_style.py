"""The app's style: Fusion, with the boundary of check boxes, radio buttons, spin boxes and
combo boxes drawn in the theme's `control` colour.

Fusion derives those outlines from the window colour (about 1.2:1 in the dark theme, 2:1 in
the light one): an unchecked box was nearly invisible. WCAG asks 3:1 for a control's boundary
(tests/gui/test_gui_contrast.py renders each one). Line edits and text fields get theirs from
the style sheet.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QStyleOptionComplex,
    QWidget,
)

PE = QStyle.PrimitiveElement
CC = QStyle.ComplexControl
FIELD_RADIUS = 2.0  # Fusion's own, so the boundary lies on its outline


class ControlStyle(QProxyStyle):
    def __init__(self, colour: str, focus: str) -> None:
        super().__init__(QStyleFactory.create("Fusion"))
        self.set_colours(colour, focus)

    def set_colours(self, colour: str, focus: str) -> None:
        """Another theme's colours, in place: a new style would restyle every widget once more."""
        self._colour, self._focus = QColor(colour), QColor(focus)

    def drawPrimitive(  # noqa: N802 (Qt's name)
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element == PE.PE_IndicatorCheckBox:
            self._outline(painter, option, lambda r: painter.drawRect(r))
        elif element == PE.PE_IndicatorRadioButton:
            self._outline(painter, option, lambda r: painter.drawEllipse(r))

    def drawComplexControl(  # noqa: N802 (Qt's name)
        self,
        control: QStyle.ComplexControl,
        option: QStyleOptionComplex,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawComplexControl(control, option, painter, widget)
        if control in (CC.CC_SpinBox, CC.CC_ComboBox) and getattr(option, "frame", True):
            self._outline(
                painter, option, lambda r: painter.drawRoundedRect(r, FIELD_RADIUS, FIELD_RADIUS)
            )

    def _outline(
        self, painter: QPainter, option: QStyleOption, draw: Callable[[QRectF], None]
    ) -> None:
        """Draws the boundary on the control's outermost pixels (crisp: half a pixel in)."""
        state = option.state
        if not state & QStyle.StateFlag.State_Enabled:
            return  # inactive controls keep Fusion's quieter look (WCAG exempts them)
        focused = state & QStyle.StateFlag.State_HasFocus
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(self._focus if focused else self._colour, 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        draw(QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5))
        painter.restore()
