"""Pages with known text, drawn with Pillow: the one renderer behind the OCR benchmark, the
INT8 calibration pages (`quantize.py`) and the tests. No Qt, no models.

A `Page` records what it draws as the truth an OCR result is scored against: the text lines in
reading order, the cells of each table (with their boxes), and the boxes of decorations
(avatars, checkboxes, icons) that must not come out as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from desktop.core.ocr.models import Box

Colour = tuple[int, int, int]
Face = ImageFont.FreeTypeFont | ImageFont.ImageFont
FONT_DIRS = (Path("/usr/share/fonts/truetype"), Path("/usr/share/fonts/opentype"))
FONT_FILES = {  # Debian's fonts-dejavu-core, fonts-liberation, fonts-noto-cjk (FONT_PACKAGES)
    "sans": "dejavu/DejaVuSans.ttf",
    "sans-bold": "dejavu/DejaVuSans-Bold.ttf",
    "serif": "liberation/LiberationSerif-Regular.ttf",
    "serif-bold": "liberation/LiberationSerif-Bold.ttf",
    "arial": "liberation/LiberationSans-Regular.ttf",
    "arial-bold": "liberation/LiberationSans-Bold.ttf",
    "mono": "dejavu/DejaVuSansMono.ttf",
    "cjk": "noto/NotoSansCJK-Regular.ttc",
}


FONT_PACKAGES = {"dejavu": "fonts-dejavu-core", "liberation": "fonts-liberation",
                 "noto": "fonts-noto-cjk"}  # fmt: skip


class FontMissing(RuntimeError):
    """A font the caller insists on (the benchmark's exact faces) is not installed."""


def font_package(key: str) -> str:
    """The Debian package that installs FONT_FILES[key]."""
    return FONT_PACKAGES[FONT_FILES[key].split("/")[0]]


def missing_font_sentence(key: str) -> str:
    name = Path(FONT_FILES[key]).name
    return (f"The font {name} is not installed: install Debian's {font_package(key)} "
            "(scripts/dev.sh installs it).")  # fmt: skip


def font_path(key: str) -> Path | None:
    for folder in FONT_DIRS:
        path = folder / FONT_FILES[key]
        if path.exists():
            return path
    return None


def font(key: str, size: int, *, required: bool = False) -> Face:
    """One of FONT_FILES; elsewhere Pillow's search of the system fonts by file name, then (not
    `required`) the TrueType face Pillow ships."""
    path = font_path(key)
    if path is not None:
        return ImageFont.truetype(str(path), size)
    try:
        return ImageFont.truetype(Path(FONT_FILES[key]).name, size)
    except OSError:
        if required:
            raise FontMissing(missing_font_sentence(key)) from None
        return ImageFont.load_default(size)


def named_font(name: str | None, size: int) -> Face:
    """A system font by file name (Pillow searches the font folders); None: Pillow's own."""
    return ImageFont.load_default(size) if name is None else ImageFont.truetype(name, size)


def available_fonts(names: Sequence[str]) -> list[str | None]:
    """The names Pillow can open, in order; [None] (Pillow's own face) when none can."""
    found: list[str | None] = []
    for name in names:
        try:
            ImageFont.truetype(name, 12)
        except OSError:
            continue
        found.append(name)
    return found or [None]


def wrap(text: str, face: Face, width: int) -> list[str]:
    """Words into lines no wider than `width` pixels."""
    lines, current = [], ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if current and face.getlength(candidate) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    return [*lines, current] if current else lines


def wrap_cjk(text: str, face: Face, width: int) -> list[str]:
    """Characters into lines no wider than `width` (CJK text breaks anywhere)."""
    lines, current = [], ""
    for char in text:
        if current and face.getlength(current + char) > width:
            lines.append(current)
            current = char.lstrip()
        else:
            current += char
    return [*lines, current] if current else lines


@dataclass(frozen=True)
class TruthCell:
    text: str
    box: Box


@dataclass
class TruthTable:
    """A table as drawn: rows of cells, the first row the header."""

    rows: list[list[TruthCell]] = field(default_factory=list)

    def texts(self) -> list[list[str]]:
        return [[cell.text for cell in row] for row in self.rows]


@dataclass
class Page:
    """A canvas that records the text it draws, in reading order, as the reference."""

    width: int
    height: int
    background: Colour = (255, 255, 255)
    ink: Colour = (20, 20, 20)
    reference: list[str] = field(default_factory=list)
    tables: list[TruthTable] = field(default_factory=list)
    decorations: list[Box] = field(default_factory=list)  # never text: avatars, checkboxes

    def __post_init__(self) -> None:
        self.image = Image.new("RGB", (self.width, self.height), self.background)
        self.draw = ImageDraw.Draw(self.image)

    def text(self, x: float, y: float, text: str, face: Face, fill: Colour | None = None) -> Box:
        """Draw one run of text without recording it; its ink box."""
        self.draw.text((x, y), text, font=face, fill=fill or self.ink)
        left, top, right, bottom = self.draw.textbbox((x, y), text, font=face)
        return round(left), round(top), round(right), round(bottom)

    def lines(
        self,
        x: int,
        y: int,
        lines: list[str],
        face: Face,
        *,
        spacing: float = 1.45,
        fill: Colour | None = None,
    ) -> int:
        """Draw and record lines one below the other; the y below the last."""
        # A bitmap font (Pillow without FreeType) has no size: its line height stands in.
        size = face.size if isinstance(face, ImageFont.FreeTypeFont) else face.getbbox("Ag")[3]
        step = round(size * spacing)
        for line in lines:
            self.draw.text((x, y), line, font=face, fill=fill or self.ink)
            y += step
        self.reference.extend(lines)
        return y

    def decoration(self, box: Box) -> Box:
        self.decorations.append(box)
        return box

    def reference_text(self) -> str:
        return "\n".join(self.reference)


def render_lines(
    lines: Sequence[str],
    *,
    size: int = 18,
    width: int = 640,
    height: int | None = None,
    left: int = 24,
    top: int = 20,
    spacing: float = 1.6,
    mono: bool = False,
    ink: Colour = (20, 20, 20),
) -> Image.Image:
    """Dark lines on white in DejaVu (Pillow's own face without it): the tests' plain page."""
    face = font("mono" if mono else "sans", size)
    step = round(size * spacing)
    page = Page(width, height or 40 + step * len(lines), ink=ink)
    for number, line in enumerate(lines):
        page.text(left, top + number * step, line, face)
    return page.image
