"""Faint ink: text a few grey levels off its background (an e-mail in 246/255 on white) is
read by the OCR as nothing, yet a thresholded copy shows it plainly.

The ink is measured against its local background (a morphological black-hat, a top-hat on
a dark page, so a light panel is background, not ink). Where the page holds faint ink
outside every line the OCR read, and more of it than strong ink there (the soft edges of an
icon are not text), the page is read again as a contrast-stretched copy: that ink shown
black on white. Ordinary pages have none, and cost one look at their pixels.
"""

from __future__ import annotations

import cv2
import numpy as np
from PIL import Image

from desktop.core.ocr.models import OcrResult

NOISE = 2  # grey levels off the background that are noise (JPEG, dithering)
FAINT = 12  # grey levels off the background shown black when no faint ink sets the scale
TOP_PERCENTILE = 99  # of the faint ink's levels: shown black in the stretched copy
STRONG = 40  # grey levels off the background that any read would see
MIN_FAINT_PIXELS = 150  # a few faint glyphs: less is a speck
KERNEL = 41  # px: wider than a stroke of large letters, so strokes stand out of the background
LINE_PAD = 0.5  # line heights around each read line that its own soft edges may reach


def _hats(image: Image.Image) -> np.ndarray:
    """How far each pixel is off its local background: darker on a light page, lighter on
    a dark one (both at once would count the background between glyphs as ink)."""
    gray = np.asarray(image.convert("L"))
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (KERNEL, KERNEL))
    light_page = np.median(gray) >= 128
    return cv2.morphologyEx(gray, cv2.MORPH_BLACKHAT if light_page else cv2.MORPH_TOPHAT, kernel)


def faint_ink(image: Image.Image, result: OcrResult) -> bool:
    """Faint ink outside the lines `result` read on `image`, more of it than strong ink."""
    hats = _hats(image)
    outside = np.ones(hats.shape, bool)
    for line in result.lines:
        left, top, right, bottom = line.box
        pad = round(LINE_PAD * (bottom - top))
        outside[max(top - pad, 0) : bottom + pad, max(left - pad, 0) : right + pad] = False
    for code in result.codes:
        left, top, right, bottom = code.box
        outside[max(top, 0) : bottom, max(left, 0) : right] = False
    faint = int(np.count_nonzero(outside & (hats > NOISE) & (hats < STRONG)))
    strong = int(np.count_nonzero(outside & (hats >= STRONG)))
    return faint >= MIN_FAINT_PIXELS and faint > strong


def beyond(result: OcrResult, first: OcrResult) -> OcrResult:
    """The lines of `result` (the stretched copy's read) that no line of `first` shares
    rows and columns with: the faint text alone, to judge how well it was read."""
    from dataclasses import replace

    def shared(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
        return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])

    lines = [n for n in result.lines if not any(shared(n.box, o.box) for o in first.lines)]
    return replace(result, lines=lines, unsure_lines=result.unsure_lines)


def stretched(image: Image.Image) -> Image.Image:
    """The page with its ink shown black on white, each pixel in proportion to how far it is
    off its background against the faint ink's darkest (a glyph's soft edges stay soft):
    the same pixels' places, for the OCR."""
    hats = _hats(image).astype(np.float32)
    inked = hats[(hats > NOISE) & (hats < STRONG)]
    top = float(np.percentile(inked, TOP_PERCENTILE)) if inked.size else float(FAINT)
    shade = np.where(hats > NOISE, np.clip(hats * 255 / max(top, NOISE + 1), 0, 255), 0)
    return Image.fromarray((255 - shade).astype(np.uint8), "L").convert("RGB")
