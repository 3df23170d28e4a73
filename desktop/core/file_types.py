"""Which files DeskLens reads, by extension (no imaging library: the CLI's fast paths use it)."""

from __future__ import annotations

from pathlib import Path

IMAGE_EXTENSIONS: frozenset[str] = frozenset(
    {".png", ".jpg", ".jpeg", ".jpe", ".jfif", ".webp", ".bmp", ".dib", ".tif", ".tiff", ".gif"}
)
PDF_EXTENSION = ".pdf"


def is_image_or_pdf(path: Path) -> bool:
    suffix = path.suffix.lower()
    return suffix in IMAGE_EXTENSIONS or suffix == PDF_EXTENSION
