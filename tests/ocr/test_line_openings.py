"""The rules' opening (`ruled_tables._keep_runs`) opens only the columns (rows) with ink
enough to keep a run; the mask must be OpenCV's opening of the whole page, pixel for pixel,
at the page's edges and for even kernels too."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from desktop.core.ocr.ruled_tables import _keep_runs

LENGTHS = (1, 2, 3, 4, 8, 9, 25, 40, 99, 150)


def _opened(ink: np.ndarray, kernel_size: tuple[int, int]) -> np.ndarray:
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, kernel_size)
    return cv2.morphologyEx(ink, cv2.MORPH_OPEN, kernel)


@pytest.mark.parametrize("seed", range(6))
def test_the_opening_is_opencvs_on_random_masks_with_long_runs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    height, width = (int(n) for n in rng.integers(1, 100, 2))
    ink = (rng.random((height, width)) < rng.uniform(0.1, 0.95)).astype(np.uint8) * 255
    for _ in range(4):  # rules, some from the page's edge
        x, y = int(rng.integers(0, width)), int(rng.integers(0, height))
        ink[y : y + int(rng.integers(1, height + 1)), x] = 255
        ink[y, x : x + int(rng.integers(1, width + 1))] = 255
    for length in LENGTHS:
        for kernel_size in ((1, length), (length, 1)):
            assert np.array_equal(_keep_runs(ink, kernel_size), _opened(ink, kernel_size)), (
                kernel_size
            )


def test_a_rule_from_the_top_edge_half_the_kernel_long_is_kept_as_opencv_keeps_it() -> None:
    """Outside the page counts as ink for the erosion: a run from the edge survives with half
    the kernel's length, the least ink a column may have and still keep something."""
    ink = np.zeros((200, 30), np.uint8)
    ink[:50, 3] = 255  # from the top edge, exactly half of a 100 px kernel
    ink[:49, 7] = 255  # one short of it
    ink[60:160, 12] = 255  # a whole kernel's length inside the page
    ink[150:, 20] = 255  # to the bottom edge
    kept = _keep_runs(ink, (1, 100))
    assert np.array_equal(kept, _opened(ink, (1, 100)))
    assert kept[:, 3].any() and not kept[:, 7].any() and kept[:, 12].any()
