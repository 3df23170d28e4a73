"""Small pixmaps of images, sharp on HiDPI screens, cached by content digest."""

from __future__ import annotations

from collections import OrderedDict

from PIL import Image
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QSize, Qt
from PySide6.QtGui import QGuiApplication, QImage, QImageReader, QPixmap

from desktop.core.images import LoadedImage, check_pixels, load_image
from desktop.core.pictures import SHARED
from desktop.gui.image_ref import ImageRef

_CACHE_LIMIT = 256
_cache: OrderedDict[tuple[str, int], QPixmap] = OrderedDict()


def thumbnail(ref: ImageRef, edge: int) -> QPixmap:
    """A pixmap whose longer side is `edge` logical pixels (never upscaled)."""
    ratio = _device_pixel_ratio()
    key = (ref.digest, round(edge * ratio))
    cached = _cache.get(key)
    if cached is not None:
        _cache.move_to_end(key)
        return cached
    pixels = key[1]
    source = _pixels_in_memory(ref)
    if source is not None:
        image = pil_to_qimage(_shrunk(source, pixels))
    else:
        image = _read_scaled(str(ref.path), pixels)
    pixmap = QPixmap.fromImage(image)
    pixmap.setDevicePixelRatio(ratio)
    _cache[key] = pixmap
    if len(_cache) > _CACHE_LIMIT:
        _cache.popitem(last=False)
    return pixmap


def _pixels_in_memory(ref: ImageRef) -> Image.Image | None:
    """Pixels to draw from without reading the file on the GUI thread: the picture's own, its
    small preview, or the picture store's while it keeps them (a chat reopened this session)."""
    if ref.loaded is not None:
        return ref.loaded.image
    if ref.preview is not None:
        return ref.preview
    kept = SHARED.get(ref.digest)
    return kept.image if kept is not None else None


def full_pixmap(ref: ImageRef) -> QPixmap:
    """The whole image, for the viewer."""
    kept = ref.loaded or SHARED.get(ref.digest)
    if kept is not None:
        return QPixmap.fromImage(pil_to_qimage(kept.image))
    reader = QImageReader(str(ref.path))
    reader.setAutoTransform(True)  # EXIF orientation, as load_image applies it
    return QPixmap.fromImage(reader.read())


def pil_to_qimage(image: Image.Image) -> QImage:
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    data = rgb.tobytes()
    width, height = rgb.size
    # copy(): the QImage must not keep pointing into `data`, which Python will free.
    return QImage(data, width, height, 3 * width, QImage.Format.Format_RGB888).copy()


def load_qimage(image: QImage, name: str) -> LoadedImage:
    """A pasted or captured picture straight from its pixels, with no PNG encode and decode
    (issue 58: 78 against 270 ms for a 4K screenshot): the same pixels, so the same digest, as
    that round trip (tests/gui/test_gui_pasted_pixels.py: against Qt's writer, Pillow's reader)."""
    check_pixels((image.width(), image.height()), name)  # before any copy of a huge one
    alpha = image.hasAlphaChannel()
    mode = "RGBA" if alpha else "RGB"
    qt_format = QImage.Format.Format_RGBA8888 if alpha else QImage.Format.Format_RGB888
    plain = image.convertToFormat(qt_format)
    data = bytes(plain.constBits())  # constBits: a memoryview in PySide6
    size = (plain.width(), plain.height())
    return load_image(
        Image.frombuffer(mode, size, data, "raw", mode, plain.bytesPerLine(), 1), name=name
    )


def qimage_to_png(image: QImage) -> bytes:
    buffer_bytes = QByteArray()
    buffer = QBuffer(buffer_bytes)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # PySide6's stubs want bytes for the format; the binding itself takes only str.
    image.save(buffer, "PNG")  # type: ignore[call-overload]
    buffer.close()
    return bytes(buffer_bytes.data())


def _shrunk(image: Image.Image, edge: int) -> Image.Image:
    if max(image.size) <= edge:
        return image
    copy = image.copy()
    copy.thumbnail((edge, edge), Image.Resampling.LANCZOS)
    return copy


def _read_scaled(path: str, edge: int) -> QImage:
    reader = QImageReader(path)
    reader.setAutoTransform(True)
    size = reader.size()
    if size.isValid() and max(size.width(), size.height()) > edge:
        reader.setScaledSize(size.scaled(QSize(edge, edge), Qt.AspectRatioMode.KeepAspectRatio))
    image = reader.read()
    if image.isNull():  # missing or damaged file: a neutral placeholder
        image = QImage(edge, edge, QImage.Format.Format_RGB888)
        image.fill(Qt.GlobalColor.lightGray)
    return image


def _device_pixel_ratio() -> float:
    screen = QGuiApplication.primaryScreen()
    return screen.devicePixelRatio() if screen is not None else 1.0
