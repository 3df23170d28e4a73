"""A frozen screen (its picture at device pixels) and the callbacks a grab answers through."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication, QImage, QScreen


@dataclass(frozen=True)
class FrozenScreen:
    """A screen as it was when the capture started."""

    screen: QScreen
    geometry: QRect  # where the screen is on the desktop, in logical pixels
    image: QImage  # the screen's device pixels (geometry times its scale factor)

    @property
    def scale(self) -> float:
        """Device pixels per logical pixel (2.0 on a 200 % screen)."""
        return self.image.width() / max(1, self.geometry.width())


Done = Callable[[list[FrozenScreen]], None]
Failed = Callable[[str], None]


def split_desktop(image: QImage) -> list[FrozenScreen]:
    """A picture of the whole desktop (the portal's) cut into one picture per screen."""
    screens = QGuiApplication.screens()
    desktop = QRect()
    for screen in screens:
        desktop = desktop.united(screen.geometry())
    scale = image.width() / max(1, desktop.width())
    frozen = []
    for screen in screens:
        area = screen.geometry().translated(-desktop.topLeft())
        device = QRect(
            round(area.x() * scale),
            round(area.y() * scale),
            round(area.width() * scale),
            round(area.height() * scale),
        )
        picture = image.copy(device)
        picture.setDevicePixelRatio(scale)
        frozen.append(FrozenScreen(screen, screen.geometry(), picture))
    return frozen
