"""ink.ink_mask: the one rule for which pixels of a crop are ink."""

import cv2
import numpy as np

from desktop.core.ocr.ink import ink_mask


def _page(background: int, ink: int) -> np.ndarray:
    """A 20 x 40 crop: a 4 x 10 bar of `ink`, a fainter 2 x 2 speck, on `background`."""
    crop = np.full((20, 40), background, np.uint8)
    crop[8:12, 5:15] = ink
    crop[8:10, 30:32] = (background + ink) // 2 + (ink > background) * 10
    return crop


def test_against_the_median_ink_is_darker_or_lighter_than_the_background():
    for background, ink in ((250, 10), (20, 230)):
        mask = ink_mask(_page(background, ink), contrast=60)
        assert mask.dtype == bool and mask.shape == (20, 40)
        assert mask[8:12, 5:15].all() and mask[8:10, 30:32].all()
        assert np.count_nonzero(mask) == 40 + 4


def test_the_contrast_is_a_strict_floor_and_the_share_is_of_the_largest_difference():
    crop = np.full((10, 10), 200, np.uint8)
    crop[2, 2], crop[4, 4], crop[6, 6], crop[8, 8] = 140, 139, 100, 151  # 60, 61, 100, 49 off
    assert np.argwhere(ink_mask(crop, contrast=60)).tolist() == [[4, 4], [6, 6]]
    # half of the largest difference (100) or more: 49 is not ink; a share of 0.7 leaves 100
    assert np.argwhere(ink_mask(crop, share=0.5)).tolist() == [[2, 2], [4, 4], [6, 6]]
    crop[8, 8] = 150  # 50 off: exactly half is ink
    assert np.argwhere(ink_mask(crop, share=0.5)).tolist() == [[2, 2], [4, 4], [6, 6], [8, 8]]
    assert np.argwhere(ink_mask(crop, share=0.7)).tolist() == [[6, 6]]


def test_a_crop_spread_less_than_min_spread_holds_no_ink():
    crop = np.full((10, 10), 200, np.uint8)
    crop[5, 5] = 169  # 31 levels off the background
    assert not ink_mask(crop, share=0.5, min_spread=32).any()
    crop[5, 5] = 168
    assert np.argwhere(ink_mask(crop, share=0.5, min_spread=32)).tolist() == [[5, 5]]
    assert not ink_mask(crop, otsu=True, min_spread=40).any()
    assert np.argwhere(ink_mask(crop, otsu=True, min_spread=32)).tolist() == [[5, 5]]


def test_otsu_takes_the_minority_side_on_either_theme():
    for background, ink in ((250, 10), (20, 230)):
        mask = ink_mask(_page(background, ink), otsu=True)
        assert mask[8:12, 5:15].all() and mask[8:10, 30:32].all()
        assert np.count_nonzero(mask) == 44
    even = np.zeros((2, 4), np.uint8)
    even[:, 2:] = 200  # as many dark pixels as light: the lighter side is the ink
    assert ink_mask(even, otsu=True).tolist() == [[False, False, True, True]] * 2


def test_a_colour_crop_is_judged_on_its_greys_and_an_empty_one_holds_nothing():
    crop = _page(250, 10)
    colour = cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR)
    for options in ({"contrast": 60}, {"share": 0.5, "min_spread": 32}, {"otsu": True}):
        assert np.array_equal(ink_mask(colour, **options), ink_mask(crop, **options))
    assert ink_mask(np.zeros((0, 7), np.uint8)).shape == (0, 7)
    assert ink_mask(np.zeros((3, 0), np.uint8), otsu=True).shape == (3, 0)
