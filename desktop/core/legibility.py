"""The readability guard: will the image's text still be readable after the engine's resize?

The engine shrinks every image into its visual-token budget (vision.smart_resize). The fast
OCR already knows how tall the image's text lines are; the height a line keeps after the resize
is its height times the resize's vertical scale. When the typical (median) line would end up
shorter than `MIN_READABLE_LINE_PX`, the model is likely to misread or not see the text, and the
user is told so before it reads, with the remedies: more detail (a larger budget for the
image), a region (its crop is read at its own resolution), or the OCR text with the question.

The threshold is a chosen value, not a measurement: no real Qwen3-VL weights can be run by this
project's tests (the test model is random), and we found no published minimum text size for
Qwen-VL. It follows the model's geometry: Qwen3-VL cuts the resized image into 16x16-pixel
patches; an OCR line box below 8 px (half a patch; lowercase letters then about 4 px high, the
size at which glyph shapes stop being distinct even for a person and far below the 20-30 px
classic OCR engines ask for) squeezes a whole line of letters into one patch row. The constant
is named so that a measurement with real weights can replace it.

When the OCR finds no line at all, the guard says that it could not judge (`NoTextFound`):
the text most likely lost in the resize, too small or faint for the OCR's detector, is also
the text the OCR misses, so silence must not pass for "readable".
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from desktop.core.engine.vision import VisionSpec, smart_resize
from desktop.core.ocr.models import Box, OcrResult

MIN_READABLE_LINE_PX = 8.0  # chosen, see above: an OCR line box's height after the resize


@dataclass(frozen=True)
class TextSize:
    """One image's text lines, before and after the engine's resize."""

    image: str
    line_px: float  # the median OCR line-box height in the image, in pixels
    scale: float  # the engine's vertical resize factor for this image
    detail_tokens: int  # the visual-token budget that would keep the lines readable
    threshold_px: float = MIN_READABLE_LINE_PX

    @property
    def predicted_px(self) -> float:
        return self.line_px * self.scale

    @property
    def too_small(self) -> bool:
        return self.predicted_px < self.threshold_px

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "text_found": True,
            "line_px": round(self.line_px, 1),
            "predicted_px": round(self.predicted_px, 1),
            "threshold_px": self.threshold_px,
            "too_small": self.too_small,
            "detail_tokens": self.detail_tokens,
        }


@dataclass(frozen=True)
class NoTextFound:
    """An image (or region) in which the fast OCR found no text line. The guard cannot judge
    it, and says so rather than letting silence pass for "readable": text too small or faint
    for the OCR's detector is the text most likely lost in the resize too."""

    image: str
    scale: float  # the engine's vertical resize factor for this image
    detail_tokens: int  # the budget that shows the image at its own size (or the model's most)
    threshold_px: float = MIN_READABLE_LINE_PX

    @property
    def shrunk(self) -> bool:
        """Whether the resize shrinks it (not merely rounds its sides to whole tokens, which
        moves a side by at most 16 px): else no budget or region could show more."""
        return self.scale < 0.9

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "text_found": False,
            "line_px": None,
            "predicted_px": None,
            "threshold_px": self.threshold_px,
            "too_small": None,  # not known: no line to measure
            "detail_tokens": self.detail_tokens,
        }


Judged: TypeAlias = TextSize | NoTextFound


def judge(heights: Sequence[int], size: tuple[int, int], name: str, spec: VisionSpec) -> Judged:
    """The text size after the resize, or NoTextFound when the OCR found no line."""
    found = text_size(heights, size, name, spec)
    if found is not None:
        return found
    native = math.ceil(size[0] * size[1] / spec.factor**2 / 100) * 100
    most = spec.ceiling_pixels // spec.factor**2
    return NoTextFound(name, resize_scale(size, spec), min(native, most))


def resize_scale(size: tuple[int, int], spec: VisionSpec) -> float:
    """The engine's vertical scale for an image of `size` (width, height)."""
    width, height = size
    new_height, _ = smart_resize(height, width, spec.factor, spec.min_pixels, spec.max_pixels)
    return new_height / height


def line_heights(result: OcrResult, box: Box | None = None) -> list[int]:
    """The heights of the OCR's line boxes; with `box`, of the lines centred inside it."""
    heights = []
    for line in result.lines:
        left, top, right, bottom = line.box
        if box is not None:
            centre_x, centre_y = (left + right) / 2, (top + bottom) / 2
            if not (box[0] <= centre_x < box[2] and box[1] <= centre_y < box[3]):
                continue
        if bottom > top:
            heights.append(bottom - top)
    return heights


def text_size(
    heights: Sequence[int], size: tuple[int, int], name: str, spec: VisionSpec
) -> TextSize | None:
    """The text size after the resize of an image of `size` whose lines are `heights` tall;
    None when there are no lines."""
    if not heights:
        return None
    line_px = float(statistics.median(heights))
    return TextSize(name, line_px, resize_scale(size, spec), _tokens_for(size, line_px, spec))


def _tokens_for(size: tuple[int, int], line_px: float, spec: VisionSpec) -> int:
    """The smallest budget (in hundreds of visual tokens) at which the median line keeps the
    threshold's height; at most the image at its own size, which no budget improves."""
    native = math.ceil(size[0] * size[1] / spec.factor**2 / 100) * 100
    needed = min(1.0, MIN_READABLE_LINE_PX / line_px)
    tokens = math.ceil(size[0] * size[1] * needed * needed / spec.factor**2 / 100) * 100
    while tokens < native:  # the resize rounds to whole tokens: a few hundred more may do
        budget = dataclasses.replace(spec, max_pixels=tokens * spec.factor**2)
        if line_px * resize_scale(size, budget) >= MIN_READABLE_LINE_PX:
            break
        tokens += 100
    return min(tokens, native)
