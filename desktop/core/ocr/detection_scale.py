"""At what scale the text detector looks at an image: once for ordinary screenshots, a cheap
half-scale probe for HiDPI ones with large text, and tiles at the image's own scale for large
pages of small text.

The detector reads a page scaled down to `max_side`, and its squeeze-excitation blocks average
over the whole input, so two things lose small text on large pages: the scaling (12 px text on
a 3840 x 2160 page is 6 px at 0.53x) and a large, mostly blank input (12 px lines found on
2048 x 1200 px were lost on 2048 x 2048). Such pages are detected again in tiles of
`small_text_tile_side`, at their own scale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from desktop.core.ocr.ink import ink_mask
from desktop.core.ocr.strips import join_tiled_boxes, plan_grid

# The least spread of a tile's values, in some channel, for it to be looked at.
BLANK_RANGE = 12
# (image, zoom) -> (quadrilaterals in image pixels, their heights in detector pixels)
DetectOnce = Callable[[np.ndarray, float], tuple[list[np.ndarray], list[float]]]


@dataclass(frozen=True)
class DetectorSettings:
    max_side: int = 2048  # longer sides are scaled down before detection
    min_side: int = 64  # tiny snippets are scaled up so the detector sees whole glyphs
    upscale: float = 1.0  # >1 enlarges the detector's view (small fonts), at quadratic cost
    # Above ~3 MP a screenshot is usually HiDPI (2560 x 1440 and up) with large text.
    probe_above_pixels: int = 3_000_000
    # Text boxes this tall (detector pixels) are found and bounded as well as at full scale.
    reliable_text_height: float = 16.0
    # A page scaled down below this to fit `max_side`, or seen larger than `fading_pixels`,
    # gets a second look if its text came out small (3840 x 2160 at 0.53x: 13 px lines lost
    # or misread; 2560 x 1440 at 0.8x: 9 px read; 2560 x 2560 at 0.8x: 11-12 px lost).
    small_text_below_scale: float = 0.75
    fading_pixels: int = 3_200_000
    # On such a large input whole rows of text fade, not only small boxes: there boxes under
    # this height count as small (2560 x 2560, 12 px serif: 2 boxes of 17.8 px, 6 lines lost).
    fading_text_height: float = 24.0
    # Tiles of that second look: at most this many, each up to this side (the detector lost
    # sparse lines on inputs much larger).
    small_text_tile_side: int = 1536
    max_small_text_tiles: int = 16


def detector_scale(height: int, width: int, settings: DetectorSettings, zoom: float = 1.0) -> float:
    """The factor from image pixels to the detector's: `max_side` caps the longer side (times
    `upscale`); tiny snippets are enlarged so that the detector sees whole glyphs, but never
    past the cap (a 65535 x 10 strip would otherwise be fed as 419,000 x 64 px, 9.6 GB)."""
    cap = settings.upscale * settings.max_side / max(height, width)
    scale = zoom * settings.upscale * min(1.0, settings.max_side / max(height, width))
    return min(max(scale, settings.min_side / min(height, width)), cap)


def detect_at_readable_scale(
    bgr: np.ndarray, settings: DetectorSettings, detect_once: DetectOnce
) -> list[np.ndarray]:
    """Text line quadrilaterals of one image (or one tile of a long strip), in image pixels.

    Large images are first probed at half scale, a quarter of the work; the probe stands if
    its boxes came out tall enough to be found reliably and each holds one line (tiny text
    merges into one box per paragraph at that scale). An image scaled down to the
    detector's cap by more than `small_text_below_scale`, or seen larger than
    `fading_pixels`, whose text then came out small (nothing found, or a quarter of its
    boxes under `reliable_text_height`) is detected again at its own scale, in tiles.
    """
    height, width = bgr.shape[:2]
    if height * width > settings.probe_above_pixels:
        quads, heights = detect_once(bgr, 0.5)
        if (
            quads
            and float(np.median(heights)) >= settings.reliable_text_height
            and not any(_holds_several_lines(bgr, quad) for quad in quads)
        ):
            return quads
    quads, heights = detect_once(bgr, 1.0)
    scale = detector_scale(height, width, settings)
    fading = scale * scale * height * width > settings.fading_pixels
    small = settings.fading_text_height if fading else settings.reliable_text_height
    if (scale >= settings.small_text_below_scale and not fading) or (
        heights and float(np.quantile(heights, 0.25)) >= small
    ):
        return quads
    tiles = plan_grid(height, width, settings.small_text_tile_side, settings.max_small_text_tiles)
    pieces = ((tile, bgr[tile.top : tile.bottom, tile.left : tile.right]) for tile in tiles)
    return join_tiled_boxes(
        [(tile, detect_once(piece, 1.0)[0]) for tile, piece in pieces if not _blank(piece)]
    )


def _blank(pixels: np.ndarray) -> bool:
    """One colour, give or take noise: nothing to find (a blank 100 MP page skips 16 looks)."""
    # Axis by axis: reducing a slice of a large page over both axes at once took 0.24 s a
    # tile, this 3 ms.
    spread = pixels.max(axis=0).max(axis=0).astype(int) - pixels.min(axis=0).min(axis=0)
    return bool(spread.max() < BLANK_RANGE)


def _holds_several_lines(bgr: np.ndarray, quad: np.ndarray) -> bool:
    """Whether the box's pixels hold two bands of ink rows (3 px or more) with blank rows
    between them, as the lines of a paragraph do. Errs towards yes (a dotted "i" in large
    text, a thick underline): that costs only the full-scale look."""
    (left, top), (right, bottom) = quad.min(axis=0).astype(int), quad.max(axis=0).astype(int)
    crop = bgr[top : bottom + 1, left : right + 1]
    if crop.shape[0] < 8 or crop.shape[1] < 2:
        return False
    rows = np.concatenate(([False], ink_mask(crop, otsu=True).any(axis=1), [False]))
    edges = np.flatnonzero(rows[1:] != rows[:-1])  # starts and ends of the runs of ink rows
    return int((edges[1::2] - edges[0::2] >= 3).sum()) >= 2
