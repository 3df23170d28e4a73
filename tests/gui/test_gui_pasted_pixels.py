"""A pasted or captured picture is taken from its pixels, not through a PNG encode and decode
(issue 58): the same pixels, and so the same digest, as that round trip through Qt's PNG writer
and Pillow's reader gave, for every pixel format a clipboard or a screen grab hands over."""

from __future__ import annotations

import random

import pytest
from PySide6.QtGui import QColor, QImage

from desktop.core.images import ImageError, load_image
from desktop.gui.widgets.thumbnails import load_qimage, qimage_to_png

FORMATS = [
    QImage.Format.Format_RGB32,  # an X11 screen grab
    QImage.Format.Format_ARGB32,
    QImage.Format.Format_ARGB32_Premultiplied,  # a clipboard image with transparency
    QImage.Format.Format_RGBA8888,
    QImage.Format.Format_RGB888,
    QImage.Format.Format_RGB16,
    QImage.Format.Format_Grayscale8,
]


def noise(qt_format: QImage.Format, size=(37, 23)) -> QImage:
    """Random colours and alphas (odd width: rows padded to 4 bytes in most formats)."""
    rng = random.Random(int(qt_format.value))
    image = QImage(*size, qt_format)
    for y in range(size[1]):
        for x in range(size[0]):
            rgb = [rng.randrange(256) for _ in range(3)]
            image.setPixelColor(x, y, QColor(*rgb, rng.choice([0, 1, 77, 128, 254, 255])))
    return image


@pytest.mark.parametrize("qt_format", FORMATS, ids=lambda f: f.name)
def test_the_pixels_are_those_the_png_round_trip_gave(qapp, qt_format):
    image = noise(qt_format)
    direct = load_qimage(image, "pasted image")
    through_png = load_image(qimage_to_png(image), name="pasted image")
    assert direct.size == through_png.size == (37, 23)
    assert direct.digest == through_png.digest
    assert direct.image.tobytes() == through_png.image.tobytes()


def test_a_picture_without_pixels_is_refused_by_name(qapp):
    with pytest.raises(ImageError, match='"pasted image" has no pixels'):
        load_qimage(QImage(), "pasted image")
