"""Decoded pictures shared by content digest, so a picture is decoded and hashed once.

The intake decodes a dropped file (and hashes its pixels); every later reader of the same
picture — the read-ahead, the readability guard's OCR, the question, a reopened chat's replay —
takes those pixels from here instead of decoding the file again (issue 58: four decodes and
hashes per drop before). Readers share them read-only, across threads. The store is bounded by
the pixels' bytes, least recently used out first, so a folder of screenshots does not stay in
memory; a picture pushed out (or one larger than the whole bound) is decoded again from its
file by whoever holds the path (`gui/image_ref.py`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

from desktop.core.images import LoadedImage, load_image

# RGB bytes kept: about ten 4K screenshots, or ninety 1280x720 ones.
DEFAULT_LIMIT_BYTES = 256 * 1024 * 1024


def pixel_bytes(image: LoadedImage) -> int:
    width, height = image.size
    return width * height * len(image.image.getbands())


class Pictures:
    def __init__(self, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> None:
        self.limit_bytes = limit_bytes
        self._kept: OrderedDict[str, LoadedImage] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def keep(self, image: LoadedImage) -> LoadedImage:
        """Keeps `image` under its digest (the first one kept wins) and returns it."""
        size = pixel_bytes(image)
        if size > self.limit_bytes:
            return image
        with self._lock:
            if image.digest in self._kept:
                self._kept.move_to_end(image.digest)
                return image
            self._kept[image.digest] = image
            self._bytes += size
            while self._bytes > self.limit_bytes:
                _, dropped = self._kept.popitem(last=False)
                self._bytes -= pixel_bytes(dropped)
        return image

    def get(self, digest: str, name: str | None = None) -> LoadedImage | None:
        """The kept picture of `digest` (under `name` when given), or None."""
        with self._lock:
            found = self._kept.get(digest)
            if found is None:
                return None
            self._kept.move_to_end(digest)
        return found if name is None or name == found.name else replace(found, name=name)

    def load(self, digest: str, path: Path, name: str) -> LoadedImage:
        """The kept pixels of `digest`, else the file at `path` decoded (and kept); raises
        `ImageError` when it cannot be read."""
        kept = self.get(digest, name)
        return kept if kept is not None else self.keep(load_image(path, name=name))

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._bytes = 0

    @property
    def kept_bytes(self) -> int:
        return self._bytes


# The process's one store: the GUI's intake fills it, its workers read from it.
SHARED = Pictures()
