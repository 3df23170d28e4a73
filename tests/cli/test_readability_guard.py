"""The readability guard (issue 40) on rendered pages read by the real fast OCR: the predicted
height is the OCR's line height times the engine's resize, the warning comes exactly when it is
under the threshold, and at several text sizes and budgets it falls on the side the sizes say."""

from __future__ import annotations

import pytest

from desktop.cli.ask_checks import text_sizes, warning
from desktop.core.engine.vision import VisionSpec, smart_resize
from desktop.core.images import load_image
from desktop.core.legibility import MIN_READABLE_LINE_PX, line_heights, text_size
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.regions import Region

# The fast OCR's detector finds 10 px text on a page of this size (not at 2000 px wide, where
# its own resize makes the text too small for it: the guard can only judge text it finds).
PAGE = (1400, 1000)
FONT_SIZES = (10, 24, 40)
BUDGETS = (64, 160, 1280)  # visual tokens per image; 1280 is the default
# Each at least 10 % from the threshold (box heights are 1.2-2.1x the font size).
EXPECTED_SMALL = {(10, 64), (10, 160), (24, 64)}


def spec(tokens: int) -> VisionSpec:
    return VisionSpec(16, 2, 2, 48, 64, (0.5,) * 3, (0.5,) * 3, 65536, tokens * 32 * 32)


@pytest.fixture(scope="module")
def pages():
    ocr = OcrEngine(threads=2)
    found = {}
    for size in FONT_SIZES:
        lines = [f"Statement line {n}: paid 1,{n:03d}.50 to Acme Widgets" for n in range(6)]
        image = load_image(render_lines(lines, size=size, width=PAGE[0], height=PAGE[1]))
        found[size] = (image, ocr.extract(image))
    return found


def test_the_warning_comes_exactly_when_the_predicted_height_is_under_the_threshold(pages):
    outcomes = {}
    for size, (image, result) in pages.items():
        heights = line_heights(result)
        assert len(heights) == 6  # every line read, its box about the font's size
        assert all(size <= height <= 2.2 * size for height in heights), (size, heights)
        for tokens in BUDGETS:
            checked = text_size(heights, image.size, "page.png", spec(tokens))
            assert checked is not None
            new_height, _ = smart_resize(PAGE[1], PAGE[0], 32, 65536, tokens * 1024)
            middle = sorted(heights)[2:4]  # the median of six
            expected = sum(middle) / 2 * new_height / PAGE[1]
            assert checked.predicted_px == pytest.approx(expected)
            assert checked.too_small == (expected < MIN_READABLE_LINE_PX)
            said = warning([checked])
            assert (said is not None) == checked.too_small
            if said is not None:  # the remedies, with a budget that would do
                assert "--max-visual-tokens" in said and "--region" in said
                assert "--ground" in said and said.count("\n") == 0
                better = text_size(heights, image.size, "page.png", spec(checked.detail_tokens))
                assert better is not None and not better.too_small
            outcomes[size, tokens] = checked.too_small
    assert {key for key, small in outcomes.items() if small} == EXPECTED_SMALL


def test_a_region_is_judged_by_its_own_crop(pages):
    image, result = pages[10]
    region = Region(0, 0, 700, 300)  # the lines, read at their own resolution
    [whole] = text_sizes([result], [image], (), spec(160))
    [crop] = text_sizes([result], [image], (region,), spec(160))
    assert whole.too_small and not crop.too_small
    assert crop.image.endswith("region 1") and crop.scale > 2 * whole.scale
    assert text_sizes([result], [image], (), None) == []  # a server's budget is not known
