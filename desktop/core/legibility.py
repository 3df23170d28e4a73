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
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from desktop.core.engine.vision import VisionSpec, smart_resize
from desktop.core.ocr.models import OcrResult

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
            "line_px": round(self.line_px, 1),
            "predicted_px": round(self.predicted_px, 1),
            "threshold_px": self.threshold_px,
            "too_small": self.too_small,
            "detail_tokens": self.detail_tokens,
        }


def resize_scale(size: tuple[int, int], spec: VisionSpec) -> float:
    """The engine's vertical scale for an image of `size` (width, height)."""
    width, height = size
    new_height, _ = smart_resize(height, width, spec.factor, spec.min_pixels, spec.max_pixels)
    return new_height / height


def text_size(result: OcrResult, name: str, spec: VisionSpec) -> TextSize | None:
    """The image's text size after the resize; None when the OCR found no lines."""
    heights = [line.box[3] - line.box[1] for line in result.lines if line.box[3] > line.box[1]]
    if not heights:
        return None
    line_px = float(statistics.median(heights))
    scale = resize_scale((result.width, result.height), spec)
    return TextSize(name, line_px, scale, _tokens_for(result, line_px, spec))


def _tokens_for(result: OcrResult, line_px: float, spec: VisionSpec) -> int:
    """Visual tokens at which the median line keeps the threshold's height (the budget is
    rounded up to a hundred; at most the image at its own size, which no budget improves)."""
    needed = min(1.0, MIN_READABLE_LINE_PX / line_px)
    pixels = result.width * result.height * needed * needed
    return math.ceil(pixels / spec.factor**2 / 100) * 100


def too_small(sizes: Sequence[TextSize | None]) -> list[TextSize]:
    return [size for size in sizes if size is not None and size.too_small]
