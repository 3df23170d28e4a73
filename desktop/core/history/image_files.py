"""The history's image folder: each distinct picture once, as images/<2 hex>/<digest>.png.

File paths come from digests only, never from image names, so no name can make the store
write outside its folder.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from desktop.core import atomic
from desktop.core.images import LoadedImage

TEMP_SUFFIX = ".partial"
_STALE_TEMP_SECONDS = 3600  # older partial files are leftovers of a crash, not a write in flight
_DIGEST = re.compile(r"[0-9a-f]{64}")

logger = logging.getLogger(__name__)


def check_digest(digest: str) -> None:
    # Digests become file names: anything but 64 lower-case hex digits could leave the store.
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise ValueError(f"not a sha256 hex digest: {digest!r}")


class ImageFiles:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, digest: str) -> Path:
        check_digest(digest)
        return self.folder / digest[:2] / f"{digest}.png"

    def write(self, image: LoadedImage) -> bool:
        """Writes the image unless the folder has it already; True when a file was created.
        Written to a temporary file first, so a crash never leaves a half image."""
        path = self.path(image.digest)
        if path.exists():
            return False
        with atomic.atomic_file(path, "wb", mkdir=True, private=True, suffix=TEMP_SUFFIX) as file:
            image.image.save(file, format="PNG")
        return True

    def remove_unused(self, digests: Iterable[str], is_used: Callable[[str], bool]) -> None:
        """Deletes the files of `digests` that no message refers to any more."""
        unused = [digest for digest in digests if _DIGEST.fullmatch(digest) and not is_used(digest)]
        unlink_quietly([self.path(digest) for digest in unused])

    def remove_stale_partial_files(self) -> None:
        cutoff = time.time() - _STALE_TEMP_SECONDS
        for partial in self.folder.glob(f"*/.*{TEMP_SUFFIX}"):
            try:
                if partial.stat().st_mtime < cutoff:
                    partial.unlink()
            except OSError:
                logger.warning("could not remove the partial image %s", partial)


def unlink_quietly(paths: list[Path]) -> None:
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            logger.warning("could not remove %s", path)
