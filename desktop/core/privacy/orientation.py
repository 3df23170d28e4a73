"""Which way up a page is: a page turned 90°, 180° or 270° is read by the OCR as garbage (its
lines upside down, or stood on end and joined into one), in which no item is found, so the
page would be called clean.

A read is poor when most of its characters were read unsurely, when the readability check
says the OCR failed on it, or when its text stands on end. Only then is the page read turned
(the turn its lines' shape suggests first) and the turn whose read is good and clearly
better kept: an ordinary page costs nothing more. A page no turn reads well cannot be proven
clean, and is said to be so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image

from desktop.core.images import LoadedImage, load_image
from desktop.core.ocr.models import OcrResult
from desktop.core.ocr.readability import readability
from desktop.core.privacy.models import Box

SURE = 0.9  # a line read with this confidence or more is read surely
MIN_SURE_SHARE = 0.6  # of a good read's characters, at least this share read surely
MIN_SIDEWAYS_SHARE = 0.5  # of a read's characters, this share in lines standing on end: turned
SIDEWAYS_CHARS = 4  # a line of fewer characters may be taller than wide (a "1", an icon)
CLEARLY = 1.5  # a turned read's surely read characters over the first read's, to be kept
Reader = Callable[[LoadedImage], OcrResult]
# PIL's counterclockwise turns to try, the likelier first: lines on end were turned a quarter
TURNS_SIDEWAYS, TURNS_LEVEL = (Image.Transpose.ROTATE_90, Image.Transpose.ROTATE_270,
                               Image.Transpose.ROTATE_180), (Image.Transpose.ROTATE_180,
                               Image.Transpose.ROTATE_90, Image.Transpose.ROTATE_270)  # fmt: skip
_BACK = {
    Image.Transpose.ROTATE_90: Image.Transpose.ROTATE_270,
    Image.Transpose.ROTATE_180: Image.Transpose.ROTATE_180,
    Image.Transpose.ROTATE_270: Image.Transpose.ROTATE_90,
}
_DEGREES = {Image.Transpose.ROTATE_90: 90, Image.Transpose.ROTATE_180: 180,
            Image.Transpose.ROTATE_270: 270}  # fmt: skip


@dataclass(frozen=True)
class Turn:
    """How the page was turned to be read upright (None: as it is); lossless either way."""

    transpose: Image.Transpose | None = None

    @property
    def degrees(self) -> int:
        """Counterclockwise degrees the page was turned by to be read."""
        return _DEGREES[self.transpose] if self.transpose is not None else 0

    def show(self, image: Image.Image) -> Image.Image:
        return image if self.transpose is None else image.transpose(self.transpose)

    def back(self, image: Image.Image) -> Image.Image:
        return image if self.transpose is None else image.transpose(_BACK[self.transpose])

    def box_back(self, box: Box, size: tuple[int, int]) -> Box:
        """A box of the turned page on the page as it is (`size`: the page's, unturned)."""
        left, top, right, bottom = box
        width, height = size
        if self.transpose == Image.Transpose.ROTATE_90:  # turned: x' = y, y' = width - x
            return width - bottom, left, width - top, right
        if self.transpose == Image.Transpose.ROTATE_270:  # x' = height - y, y' = x
            return top, height - right, bottom, height - left
        if self.transpose == Image.Transpose.ROTATE_180:
            return width - right, height - bottom, width - left, height - top
        return box


UPRIGHT = Turn()


def sure_characters(result: OcrResult) -> int:
    """Characters read surely, in lines that do not stand on end."""
    return sum(
        len(line.text.strip())
        for line in result.lines
        if line.confidence >= SURE and not _on_end(line.box, line.text)
    )


def _on_end(box: Box, text: str) -> bool:
    return len(text.strip()) >= SIDEWAYS_CHARS and box[3] - box[1] > box[2] - box[0]


def _characters(result: OcrResult) -> int:
    return sum(len(line.text.strip()) for line in result.lines)


def sideways(result: OcrResult) -> bool:
    """Most of the read's characters are in lines standing on end."""
    on_end = sum(len(line.text.strip()) for line in result.lines if _on_end(line.box, line.text))
    return on_end > MIN_SIDEWAYS_SHARE * _characters(result) > 0


def poor(result: OcrResult) -> bool:
    """A read that proves nothing about the page: mostly unsure, failed, or on end. A read of
    no line at all is not poor but empty (`Redaction.outcome` "unreadable")."""
    if not result.lines:
        return readability(result).failed
    if result.text_layer:
        return False
    return (
        readability(result).failed
        or sideways(result)
        or sure_characters(result) < MIN_SURE_SHARE * _characters(result)
    )


def upright(read: Reader, image: LoadedImage, first: OcrResult) -> tuple[Turn, OcrResult, bool]:
    """The turn the page reads best at, its read, and whether that read is good (not poor).
    A good first read is kept without another look."""
    if not poor(first):
        return UPRIGHT, first, True
    best, best_read = UPRIGHT, first
    for transpose in TURNS_SIDEWAYS if sideways(first) else TURNS_LEVEL:
        turn = Turn(transpose)
        again = read(load_image(turn.show(image.image), name=image.name))
        if poor(again) or sure_characters(again) <= CLEARLY * sure_characters(best_read):
            continue
        return turn, again, True
    return best, best_read, False
