"""An image as the GUI holds it: decoded in memory, or a file plus a small preview.

Files (dropped or picked) and messages reopened from the history keep only their path and a
preview, so a folder of 200 screenshots does not hold 200 decoded images in memory: their
pixels stay in the bounded picture store (`core/pictures.py`) while it has room, and are decoded
again, in a worker thread, only once it has pushed them out. Pasted pictures and PDF pages have
no file of their own and stay decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from desktop.core.history import StoredImage
from desktop.core.images import LoadedImage
from desktop.core.pictures import SHARED

PREVIEW_EDGE = 320  # px: sharp for the largest thumbnail (160 logical px) at 200 % scaling


@dataclass(frozen=True, eq=False)
class ImageRef:
    name: str
    digest: str
    size: tuple[int, int]
    loaded: LoadedImage | None = None
    path: Path | None = None
    preview: Image.Image | None = None  # a small copy for thumbnails

    @classmethod
    def of(cls, image: LoadedImage) -> ImageRef:
        return cls(image.name, image.digest, image.size, loaded=image)

    @classmethod
    def of_file(cls, image: LoadedImage, path: Path) -> ImageRef:
        """Keeps the path and a preview; the pixels go to the picture store, which may free them."""
        SHARED.keep(image)
        preview = image.image.copy()
        preview.thumbnail((PREVIEW_EDGE, PREVIEW_EDGE), Image.Resampling.LANCZOS)
        return cls(image.name, image.digest, image.size, path=path, preview=preview)

    @classmethod
    def stored(cls, image: StoredImage) -> ImageRef:
        return cls(image.name, image.digest, (image.width, image.height), path=image.path)

    def load(self) -> LoadedImage:
        """The decoded image; raises `ImageError` when a stored file is gone or damaged.
        Call it off the GUI thread for stored images."""
        if self.loaded is not None:
            return self.loaded
        assert self.path is not None
        return SHARED.load(self.digest, self.path, self.name)
