"""The app icon (desktop/assets) and a few line icons drawn from inline SVG in the theme's
colours, so they stay crisp at any scale and readable in both themes."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QIcon, QImage, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

import desktop

ASSETS = Path(desktop.__file__).resolve().parent / "assets"
APP_ICON_SVG = ASSETS / "desklens.svg"
APP_ICON_PNG = ASSETS / "desklens.png"

# 24x24 line drawings; {c} is the stroke colour.
_SHAPES = {
    "attach": '<path d="M16 7v8.5a4 4 0 0 1-8 0V6a2.5 2.5 0 0 1 5 0v9a1 1 0 0 1-2 0V8"/>',
    "send": '<path d="M12 19V5M5.5 11.5 12 5l6.5 6.5"/>',
    "stop": '<rect x="7" y="7" width="10" height="10" rx="1.5" fill="{c}"/>',
    "plus": '<path d="M12 5v14M5 12h14"/>',
    "text": '<rect x="4" y="4" width="16" height="16" rx="3"/><path d="M8.5 9h7M12 9v7"/>',
    "sidebar": '<rect x="3.5" y="5" width="17" height="14" rx="2.5"/><path d="M9.5 5v14"/>',
}


def app_icon() -> QIcon:
    icon = QIcon()
    for path in (APP_ICON_SVG, APP_ICON_PNG):
        if path.is_file():
            icon.addFile(str(path))
    return icon


@cache
def line_icon(name: str, colour: str, size: int = 48) -> QIcon:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" '
        f'stroke="{colour}" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">'
        f"{_SHAPES[name].format(c=colour)}</svg>"
    )
    return QIcon(QPixmap.fromImage(render_svg(svg.encode(), size)))


def render_svg(data: bytes, size: int) -> QImage:
    renderer = QSvgRenderer(QByteArray(data))
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return image
