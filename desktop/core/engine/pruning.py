"""Pixel-lossless visual-token pruning: which 2x2 merge units of an image repeat a neighbour.

The method is PixelPrune's predictive coding at tau = 0 (arXiv 2604.00886), on the grid of merge
units (one visual token each, 32x32 px after the resize). The top-left unit is kept. In the first
row a unit is predicted by its left neighbour, in the first column by the one above; elsewhere by
the one above when the top-left unit equals the left one but not the top one (a vertical edge
runs through), otherwise by the left one. A unit equal to its prediction, bit for bit, is
dropped: the pixels it shows are already in the prompt, so nothing is lost. At tau = 0 equality
is transitive, so predicting from neighbours equals predicting from the kept anchors.

Compared on the resized 8-bit pixels: the normalised patches are a per-value function of them,
so equality there is equality of what the encoder would see, at an eighth of the bytes.
"""

from __future__ import annotations

import numpy as np


def unit_grid(pixels: np.ndarray, unit: int) -> np.ndarray:
    """[H, W, C] uint8 pixels -> [rows, cols, words] of comparable units (unit x unit px each)."""
    height, width, channels = pixels.shape
    rows, cols = height // unit, width // unit
    blocks = pixels[: rows * unit, : cols * unit].reshape(rows, unit, cols, unit, channels)
    flat = np.ascontiguousarray(blocks.transpose(0, 2, 1, 3, 4)).reshape(rows, cols, -1)
    # Compare 8 bytes at a time (a unit is 32*32*3 bytes, a multiple of 8 at any unit >= 4).
    if flat.shape[2] % 8 == 0:
        return flat.view(np.uint64)
    return flat


def keep_mask(units: np.ndarray) -> np.ndarray:
    """[rows, cols] bool: True where a unit differs from its predictor (it must stay)."""
    rows, cols = units.shape[:2]
    same_left = np.zeros((rows, cols), bool)  # unit == its left neighbour
    same_up = np.zeros((rows, cols), bool)  # unit == the one above
    same_left[:, 1:] = (units[:, 1:] == units[:, :-1]).all(axis=2)
    same_up[1:, :] = (units[1:, :] == units[:-1, :]).all(axis=2)
    keep = np.ones((rows, cols), bool)
    keep[0, 1:] = ~same_left[0, 1:]
    keep[1:, 0] = ~same_up[1:, 0]
    # Inner units: C (top-left) == A (left) is same_up one column to the left; C == B (top) is
    # same_left one row up.
    corner_is_left = same_up[1:, :-1]
    corner_is_top = same_left[:-1, 1:]
    from_top = corner_is_left & ~corner_is_top
    keep[1:, 1:] = ~np.where(from_top, same_up[1:, 1:], same_left[1:, 1:])
    return keep


def kept_units(pixels: np.ndarray, unit: int) -> np.ndarray:
    """Row-major indices (int64, ascending) of the merge units to keep of a resized image."""
    return np.flatnonzero(keep_mask(unit_grid(pixels, unit)))


def kept_patch_rows(units: np.ndarray, merge: int) -> np.ndarray:
    """The encoder's patch rows of the kept units: each unit's merge*merge rows, in order."""
    block = merge * merge
    return (units[:, None] * block + np.arange(block)).ravel()
