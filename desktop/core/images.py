"""Image intake shared by chat and OCR: any supported file or in-memory image -> RGB.

Every failure becomes an `ImageError` whose text is a sentence naming the file, so the GUI
and the CLI can show it as is. Pillow opens files lazily, which lets us refuse oversized
images from their header before any pixel memory is allocated.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import re
import stat
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import BinaryIO

import numpy as np
from PIL import Image, ImageCms, ImageOps

from desktop.core.file_types import IMAGE_EXTENSIONS, PDF_EXTENSION

# 100 megapixels: above any camera or A4 scan at 600 dpi (35 MP), while the RGB copy of the
# largest accepted image (300 MB) still fits comfortably in a desktop's memory.
MAX_PIXELS = 100_000_000

PASTED_IMAGE_NAME = "pasted image"

_WHITE = (255, 255, 255)
_DIGEST_STRIP_ROWS = 256


class ImageError(ValueError):
    """An image could not be used; str(error) is a user-facing sentence naming the file."""


@dataclass(frozen=True)
class LoadedImage:
    image: Image.Image  # RGB, EXIF orientation applied, original resolution
    name: str  # file name, or "pasted image"
    digest: str  # sha256 hex of (size + RGB bytes): the content key

    @property
    def size(self) -> tuple[int, int]:
        return self.image.size

    def load(self) -> LoadedImage:
        """Itself: decoded already (the conversation service's `ImageSource`)."""
        return self


ImageSource = str | os.PathLike | bytes | bytearray | memoryview | Image.Image


def load_image(source: ImageSource, *, name: str | None = None) -> LoadedImage:
    """Load a file, encoded bytes or a PIL image as an RGB `LoadedImage`.

    `name` overrides the display name (default: the file name, or "pasted image").
    Raises `ImageError` for anything that is not a readable, reasonably sized image.
    """
    if isinstance(source, Image.Image):
        label = name or PASTED_IMAGE_NAME
        with _translated_errors(label):
            rgb = _decode(source, label, owned=False)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        label = name or PASTED_IMAGE_NAME
        if len(source) == 0:
            raise _empty_error(label)
        rgb = _open_and_decode(io.BytesIO(bytes(source)), label)
    else:
        path = Path(source)
        label = name or path.name or str(path)
        try:
            _check_file(path, label)
            with path.open("rb") as file:
                rgb = _open_and_decode(file, label)
        except OSError as exc:  # permission denied, vanished meanwhile, I/O error
            reason = exc.strerror or str(exc)
            raise ImageError(f"{_quote(label)} could not be read: {reason}.") from exc
    return LoadedImage(image=rgb, name=label, digest=image_digest(rgb))


# Formats whose later frames a user made (pages, an animation); not an MPO's camera preview.
FRAME_FORMATS = frozenset({"TIFF", "GIF", "WEBP", "PNG"})


def frame_count(path: str | os.PathLike) -> int:
    """How many pages a multi-page TIFF, or frames an animated GIF, WebP or PNG, holds (1 for
    any other image, or one that cannot be opened: `load_image` says why)."""
    try:
        with warnings.catch_warnings(), Image.open(path) as opened:
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return int(getattr(opened, "n_frames", 1)) if opened.format in FRAME_FORMATS else 1
    except Exception:  # not an image, unreadable: load_image's sentence comes later
        return 1


def load_frames(path: str | os.PathLike, *, name: str | None = None) -> list[LoadedImage]:
    """Every page of a multi-page TIFF (a scanner's) or frame of an animation, each loaded as
    `load_image` loads the first; [load_image(path)] for any other image."""
    if frame_count(path) == 1:
        return [load_image(path, name=name)]
    label = name or Path(path).name
    frames = []
    with _translated_errors(label), Image.open(path) as opened:
        for index in range(opened.n_frames):
            opened.seek(index)
            rgb = _decode(opened.copy(), label, owned=True)
            frames.append(LoadedImage(image=rgb, name=label, digest=image_digest(rgb)))
    return frames


def image_digest(rgb: Image.Image) -> str:
    """sha256 over the size and the RGB bytes: equal pictures get equal digests, whatever
    their source format. Hashed in strips so a large image is never copied whole."""
    width, height = rgb.size
    hasher = hashlib.sha256(f"{width}x{height}\n".encode())
    for top in range(0, height, _DIGEST_STRIP_ROWS):
        bottom = min(height, top + _DIGEST_STRIP_ROWS)
        hasher.update(rgb.crop((0, top, width, bottom)).tobytes())
    return hasher.hexdigest()


def collect_image_files(
    paths: Iterable[str | os.PathLike], *, accept_pdf: bool = False
) -> tuple[list[Path], list[Path]]:
    """Split dropped/selected paths into (images, refused), by extension. Folders are expanded
    recursively in sorted order, skipping hidden entries. PDFs are refused unless `accept_pdf`
    is set (the OCR batch renders them page by page). Duplicates are dropped, keeping the first
    occurrence."""
    accepted_extensions = (IMAGE_EXTENSIONS | {PDF_EXTENSION}) if accept_pdf else IMAGE_EXTENSIONS
    images: list[Path] = []
    refused: list[Path] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        candidates = _files_in_folder(path, set()) if _is_dir(path) else iter([path])
        for candidate in candidates:
            if candidate in seen:
                continue
            seen.add(candidate)
            is_accepted = candidate.suffix.lower() in accepted_extensions
            (images if is_accepted else refused).append(candidate)
    return images, refused


def _files_in_folder(folder: Path, visited: set[Path]) -> Iterator[Path]:
    # `visited` holds resolved folders so a symlink loop cannot recurse forever.
    resolved = folder.resolve()
    if resolved in visited:
        return
    visited.add(resolved)
    try:
        entries = sorted(folder.iterdir(), key=lambda entry: entry.name.casefold())
    except OSError:
        return  # unreadable folder: nothing to offer from it
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if _is_dir(entry):
            yield from _files_in_folder(entry, visited)
        else:
            yield entry


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:  # a name too long, a loop of links: not a folder we can expand
        return False


def file_problem(
    path: str | os.PathLike, label: str | None = None, *, what: str = "an image"
) -> str | None:
    """Why `path` cannot be read as an input file (a sentence naming it), or None. Never
    raises: a name too long for the file system, a folder without permission, a named pipe
    (which would block a reader forever) or a device are all sentences."""
    path = Path(path)
    problem, info = _stat_problem(path, label, what)
    if problem is None and info is not None and stat.S_ISDIR(info.st_mode):
        problem = f"{_label(path, label)} is a folder, not {what}."
    if problem is None and info is not None and info.st_size == 0:
        problem = str(_empty_error(label or path.name))
    return problem


def path_problem(path: str | os.PathLike, label: str | None = None, *, what: str) -> str | None:
    """`file_problem` for a path that may also be a folder (of inputs); an empty file is
    left to its reader."""
    return _stat_problem(Path(path), label, what)[0]


def _stat_problem(
    path: Path, label: str | None, what: str
) -> tuple[str | None, os.stat_result | None]:
    quoted = _label(path, label)
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return f"{quoted} was not found.", None
    except OSError as exc:
        reason = "its name is too long" if exc.errno == errno.ENAMETOOLONG else exc.strerror
        return f"{quoted} could not be read: {reason or exc}.", None
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        return f"{quoted} is {_special_kind(info.st_mode)}, not {what}.", info
    return None, info


def _label(path: Path, label: str | None) -> str:
    return _quote(label or path.name or str(path))


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _check_file(path: Path, label: str) -> None:
    problem = file_problem(path, label)
    if problem is not None:
        raise ImageError(problem)


def _empty_error(label: str) -> ImageError:
    return ImageError(f"{_quote(label)} is empty (0 bytes), so it is not an image.")


def _open_and_decode(file: BinaryIO, label: str) -> Image.Image:
    try:
        with _translated_errors(label), Image.open(file) as opened:
            return _decode(opened, label, owned=True)
    except ImageError as exc:
        if not _text_too_large(exc.__cause__):
            raise
    # A PNG whose text metadata (zTXt, iTXt) or colour profile (iCCP) unpacks beyond Pillow's
    # bound: the pixels are fine, so they are read without them (DeskLens uses neither).
    file.seek(0)
    with _translated_errors(label), Image.open(_png_without_text(file, label)) as opened:
        return _decode(opened, label, owned=True)


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_TEXT_CHUNKS = (b"tEXt", b"zTXt", b"iTXt", b"iCCP")  # what Pillow inflates under its bound


def _text_too_large(cause: BaseException | None) -> bool:
    text = str(cause)
    return isinstance(cause, ValueError) and ("MAX_TEXT_CHUNK" in text or "text chunks" in text)


def _png_without_text(file: BinaryIO, label: str) -> io.BytesIO:
    """The PNG in `file` with its text chunks and colour profile left out (read chunk by
    chunk, skipped by seeking: a left-out chunk's data is never held in memory)."""
    if file.read(8) != _PNG_SIGNATURE:
        raise ImageError(f"{_quote(label)} is damaged or incomplete and could not be decoded.")
    kept = io.BytesIO()
    kept.write(_PNG_SIGNATURE)
    while head := file.read(8):
        if len(head) < 8:
            break
        length, kind = int.from_bytes(head[:4], "big"), head[4:]
        if kind in _PNG_TEXT_CHUNKS:
            file.seek(length + 4, io.SEEK_CUR)  # data and CRC
            continue
        kept.write(head + file.read(length + 4))
        if kind == b"IEND":
            break
    kept.seek(0)
    return kept


def check_pixels(size: tuple[int, int], label: str) -> None:
    """Raises `ImageError` for a picture with no pixels, or more than `MAX_PIXELS`."""
    if 0 in size:
        raise ImageError(f"{_quote(label)} has no pixels ({size[0]} x {size[1]}).")
    if size[0] * size[1] > MAX_PIXELS:
        raise _too_large_error(label, size[0] * size[1], size)


def _decode(image: Image.Image, label: str, *, owned: bool) -> Image.Image:
    """Decode (the first frame), apply EXIF orientation, convert to RGB. `owned` is False for
    a caller's PIL image, which must not be modified in place."""
    check_pixels(image.size, label)
    image.load()
    if owned:
        ImageOps.exif_transpose(image, in_place=True)
        return _to_rgb(image)
    return _to_rgb(ImageOps.exif_transpose(image))  # works on a copy


@contextmanager
def _translated_errors(label: str) -> Iterator[None]:
    """Turn whatever Pillow raises into an `ImageError` sentence naming the file."""
    try:
        # Our own size check replaces Pillow's warning between its two thresholds.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            yield
    except ImageError:
        raise
    except Image.DecompressionBombError as exc:
        raise _too_large_error(label, _pixels_in_bomb_message(str(exc))) from exc
    except Image.UnidentifiedImageError as exc:
        raise ImageError(
            f"{_quote(label)} is not an image in a supported format "
            "(PNG, JPEG, WebP, BMP, TIFF or GIF)."
        ) from exc
    except MemoryError as exc:
        raise ImageError(f"{_quote(label)} is too large for the memory available.") from exc
    # Pillow's decoders signal malformed data with many exception types (OSError,
    # SyntaxError, struct.error, ValueError, EOFError...): all of them mean "unreadable".
    except Exception as exc:
        raise ImageError(
            f"{_quote(label)} is damaged or incomplete and could not be decoded."
        ) from exc


def _to_rgb(image: Image.Image) -> Image.Image:
    if image.mode == "RGB":
        return image
    if image.mode == "LAB":  # CIELAB TIFFs: Pillow's plain convert() would garble colours
        converted = ImageCms.applyTransform(image, _lab_to_srgb())  # None only in place
        return converted if converted is not None else image.convert("RGB")
    if image.mode == "La":  # premultiplied alpha: Pillow converts it to LA only
        image = image.convert("LA")
    if image.mode.startswith(("I", "F")):
        image = _to_8bit_gray(image)  # transparency of high-bit-depth grey is dropped
    if image.has_transparency_data:
        return _composite_on_white(image.convert("RGBA"))
    return image.convert("RGB")


@cache
def _lab_to_srgb() -> ImageCms.ImageCmsTransform:
    lab, srgb = ImageCms.createProfile("LAB"), ImageCms.createProfile("sRGB")
    return ImageCms.buildTransform(lab, srgb, "LAB", "RGB")


def _composite_on_white(rgba: Image.Image) -> Image.Image:
    # Models and OCR read dark text on white best; a black background would hide it.
    background = Image.new("RGB", rgba.size, _WHITE)
    background.paste(rgba, mask=rgba.getchannel("A"))
    return background


def _to_8bit_gray(image: Image.Image) -> Image.Image:
    """Scale 16-bit, 32-bit integer and float greyscale to 8-bit "L".

    Pillow's own conversion clips at 255, which turns most 16-bit images white.
    """
    values = np.nan_to_num(np.asarray(image, dtype=np.float32))  # exact for 16-bit values
    low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    scaled: np.ndarray
    if image.mode.startswith("I;16") or (low >= 0 and 255 < high <= 65535):
        scaled = values / 257  # full 16-bit range onto 0..255
    elif image.mode == "F" and low >= 0 and high <= 1:
        scaled = values * 255  # normalised float image
    elif low >= 0 and high <= 255:
        scaled = values
    elif high > low:  # arbitrary range (signed, huge or scientific data): stretch to fit
        scaled = (values - low) * (255 / (high - low))
    else:  # one value outside 0..255: nothing to show but a flat image
        scaled = np.zeros_like(values)
    return Image.fromarray(np.clip(np.rint(scaled), 0, 255).astype(np.uint8))


def _too_large_error(
    label: str, pixels: int | None, size: tuple[int, int] | None = None
) -> ImageError:
    limit = f"the limit is {MAX_PIXELS / 1e6:.0f} megapixels"
    if pixels is None:  # Pillow refused it without telling the size
        return ImageError(f"{_quote(label)} is too large to open safely ({limit}).")
    dimensions = f" ({size[0]} x {size[1]} pixels)" if size else ""
    return ImageError(
        f"{_quote(label)} is too large to open safely: {pixels / 1e6:,.1f} megapixels"
        f"{dimensions}; {limit}."
    )


def _pixels_in_bomb_message(message: str) -> int | None:
    # Pillow refuses images beyond twice its limit while opening, before we can read the size;
    # its message carries the pixel count: "Image size (N pixels) exceeds ...".
    match = re.search(r"\((\d+) pixels\)", message)
    return int(match.group(1)) if match else None


def _quote(label: str) -> str:
    return f'"{label}"'
