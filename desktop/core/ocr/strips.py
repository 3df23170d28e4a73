"""Long images (scrolling screenshots, receipts, one-line strips) read within the models' caps.

The detector sees at most `max_side` pixels along an image's longer side. A 1080 x 20000 scroll
capture shrunk to fit would be 110 px wide (unreadable), and a 65535 x 10 strip enlarged to the
detector's minimum side would be 419,000 x 64 px (9.6 GB). So an image much longer than wide
is cut along its long side into overlapping tiles that each fit the caps at a readable scale;
the text boxes found in neighbouring tiles are joined where they overlap. A line crop wider
than the recognizer's cap is read in pieces. Strips that would need more than MAX_TILES tiles
are refused with a sentence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from desktop.core.images import ImageError

# Beyond this ratio of the long side to the short one an image is tiled (a 16:9 or 21:9
# screenshot, an A4 page never are).
TILE_ABOVE_ASPECT = 4.0
# Tiles are lengthened (less enlarged) to stay within this many, about a second of detection
# on 2 cores; at most MAX_TILES tiles at the natural scale are read (a strip ~390,000 px long).
PREFERRED_TILES = 64
MAX_TILES = 256
# Recognizer input width cap (48 px high lines): the widest line width the warm-up primes.
REC_MAX_WIDTH = 3584
# A joined box mostly inside another tile's joined box is the same words seen again.
SEEN_AGAIN = 0.8
# Boxes of two tiles that share this much of the shorter one along the line are the same words.
SAME_WORDS = 0.5
EDGE = 2  # px: a box this close to its tile's edge was cut by it


@dataclass(frozen=True)
class Tile:
    top: int
    left: int
    bottom: int
    right: int

    def overlaps(self, other: Tile) -> bool:
        return (
            self.left < other.right
            and other.left < self.right
            and self.top < other.bottom
            and other.top < self.bottom
        )


def plan_tiles(height: int, width: int, max_side: int, min_side: int) -> list[Tile]:
    """The tiles to detect in, in order along the long side; one tile for ordinary images.

    A tile is as long as the detector reads it at its natural scale (or, for a strip
    thinner than `min_side`, at the scale that enlarges it to `min_side`) without passing
    `max_side`; neighbours overlap by a quarter of that, at most 256 px, so that a line cut
    by one tile's edge is whole in the next.
    """
    short, long = min(height, width), max(height, width)
    length = max(short, max_side * min(short, min_side) // min_side, 4)
    if long <= TILE_ABOVE_ASPECT * short or long <= length:
        return [Tile(0, 0, height, width)]
    if _count(long, length) > PREFERRED_TILES:  # a thin strip: enlarge it less, in fewer tiles
        length = max(length, min(max_side, math.ceil(4 * long / (3 * PREFERRED_TILES))))
    count = _count(long, length)
    if count > MAX_TILES:
        raise ValueError(f"{count} tiles, more than {MAX_TILES}")
    starts = _starts(long, length, count)
    if width >= height:
        return [Tile(0, s, height, s + length) for s in starts]
    return [Tile(s, 0, s + length, width) for s in starts]


def _count(long: int, length: int) -> int:
    overlap = min(length // 4, 256)
    return math.ceil((long - overlap) / (length - overlap))


def check_readable(size: tuple[int, int], max_side: int, min_side: int, name: str) -> None:
    """Raises ImageError naming the image when it is a strip too long to be read."""
    width, height = size
    try:
        plan_tiles(height, width, max_side, min_side)
    except ValueError as exc:
        raise ImageError(
            f'"{name}" is a strip of {width} x {height} pixels, too long for its width to be '
            f"read ({exc}). Crop it into shorter parts."
        ) from exc


def plan_grid(height: int, width: int, side: int, max_tiles: int) -> list[Tile]:
    """Overlapping tiles of at most `side` x `side` pixels covering the image, row by row and
    as even as the overlap allows; when that would take more than `max_tiles`, fewer longer
    tiles (which the detector then scales down to its cap)."""
    while _count(height, side) * _count(width, side) > max_tiles:
        side = math.ceil(side * 1.25)
    rows, columns = _even(height, side), _even(width, side)
    return [Tile(top, left, bottom, right) for top, bottom in rows for left, right in columns]


def _even(long: int, side: int) -> list[tuple[int, int]]:
    """(start, end) of the fewest overlapping pieces of at most `side` along `long`, of
    equal length."""
    count, overlap = _count(long, side), min(side // 4, 256)
    length = min(long, math.ceil((long + (count - 1) * overlap) / count))
    return [(start, start + length) for start in _starts(long, length, count)]


def _starts(long: int, length: int, count: int) -> list[int]:
    overlap = min(length // 4, 256)
    return [min(i * (length - overlap), long - length) for i in range(count)]


def join_tiled_boxes(found: Sequence[tuple[Tile, list[np.ndarray]]]) -> list[np.ndarray]:
    """Quads of all tiles in image pixels, boxes of overlapping tiles that overlap (the same
    line seen twice, or one line cut by a tile edge) joined into their bounding box."""
    boxes: list[tuple[Tile, np.ndarray]] = []
    for tile, quads in found:
        offset = np.array([tile.left, tile.top], np.float32)
        boxes.extend((tile, quad + offset) for quad in quads)
    if len(found) < 2:
        return [quad for _, quad in boxes]
    # Each kept box with the tiles it was seen in: never two boxes of one tile (the detector
    # kept them apart), and a third tile's part can join a box two tiles already made. Two
    # boxes join when they are the same words (most of the shorter one along the line) or
    # when one was cut by its tile's edge; cells that merely touch stay apart. The kept
    # boxes' extents (x0, y0, x1, y1) sit in one array, measured against each new box at
    # once: a 3200 px terminal's ~1,000 boxes took 0.3 s a page box by box.
    merged: list[tuple[list[Tile], np.ndarray]] = []
    extents = np.empty((len(boxes), 4), np.float32)
    for tile, quad in boxes:
        extent = _extent(quad)
        along, across = _shares(extents[: len(merged)], extent)
        partner = next(
            (
                n
                for n in np.flatnonzero((along > 0) & (across >= 0.5)).tolist()
                if tile not in merged[n][0]
                and any(map(tile.overlaps, merged[n][0]))
                and (
                    along[n] >= SAME_WORDS
                    or _at_edge(tile, extent)
                    or any(_at_edge(seen, extents[n]) for seen in merged[n][0])
                )
            ),
            None,
        )
        if partner is None:
            extents[len(merged)] = extent
            merged.append(([tile], quad))
        else:
            tiles, kept = merged[partner]
            merged[partner] = ([*tiles, tile], _bounding_quad(kept, quad))
            extents[partner] = _extent(merged[partner][1])
    extents = extents[: len(merged)]
    return [quad for n, (_, quad) in enumerate(merged) if not _seen_again(n, merged, extents)]


def _extent(quad: np.ndarray) -> np.ndarray:
    """(x0, y0, x1, y1) of a box, float32."""
    return np.concatenate([quad.min(axis=0), quad.max(axis=0)]).astype(np.float32)


def _shares(kept: np.ndarray, box: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How much of the shorter box each kept box (rows of extents) and `box` share along
    their line, and of the thinner one across it (a column's text runs down: along is then
    y); 0 or less where they do not meet."""
    ax0, ay0, ax1, ay1 = kept.T
    bx0, by0, bx1, by1 = box
    share_x = _share(np.minimum(ax1, bx1) - np.maximum(ax0, bx0), np.minimum(ax1 - ax0, bx1 - bx0))
    share_y = _share(np.minimum(ay1, by1) - np.maximum(ay0, by0), np.minimum(ay1 - ay0, by1 - by0))
    wide = (ax1 - ax0) + (bx1 - bx0) >= (ay1 - ay0) + (by1 - by0)  # horizontal text
    return np.where(wide, share_x, share_y), np.where(wide, share_y, share_x)


def _share(meet: np.ndarray, shorter: np.ndarray) -> np.ndarray:
    return meet.astype(np.float64) / np.maximum(shorter.astype(np.float64), 1e-6)


def _at_edge(tile: Tile, extent: np.ndarray) -> bool:
    """Whether the box reaches its tile's edge (within EDGE px): a line the tile cut."""
    x0, y0, x1, y1 = extent
    return bool(
        x0 <= tile.left + EDGE
        or y0 <= tile.top + EDGE
        or x1 >= tile.right - 1 - EDGE
        or y1 >= tile.bottom - 1 - EDGE
    )


def _seen_again(
    index: int, merged: Sequence[tuple[list[Tile], np.ndarray]], extents: np.ndarray
) -> bool:
    """Whether the box lies in another box that another tile saw (SEEN_AGAIN of its area or
    more): the same words, which one tile boxed as two cells and another as one ("172,929.12"
    and "Paid" beside "172,929.12 Paid" were read twice). A tile's own boxes never nest."""
    tiles = merged[index][0]
    holding = np.flatnonzero(_inside(extents[index], extents) >= SEEN_AGAIN).tolist()
    return any(
        other != index and any(t not in tiles for t in merged[other][0]) for other in holding
    )


def _inside(extent: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The share of a box's extent inside each of `boxes` (rows of extents)."""
    x0, y0, x1, y1 = extent
    bx0, by0, bx1, by1 = boxes.T
    wide = np.maximum(np.minimum(x1, bx1) - np.maximum(x0, bx0), 0)
    high = np.maximum(np.minimum(y1, by1) - np.maximum(y0, by0), 0)
    area = max(float((x1 - x0) * (y1 - y0)), 1e-6)
    return (wide * high).astype(np.float64) / area


def split_wide_crop(crop: np.ndarray, line_height: int) -> list[np.ndarray]:
    """`crop` in pieces the recognizer reads within REC_MAX_WIDTH (one piece if it fits)."""
    height, width = crop.shape[:2]
    piece = max(1, REC_MAX_WIDTH * max(height, 1) // line_height)
    return [crop[:, start : start + piece] for start in range(0, width, piece)] or [crop]


def _bounding_quad(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    both = np.concatenate([a, b])
    (x0, y0), (x1, y1) = both.min(axis=0), both.max(axis=0)
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)
