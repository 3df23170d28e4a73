"""The readability guard (issue 40) on rendered pages read by the real fast OCR: the predicted
height is the OCR's line height times the engine's resize, the warning comes exactly when it is
under the threshold, and at several text sizes and budgets it falls on the side the sizes say.
On a 4K screen of 11 px text (issue 50) `desklens ask` at a small budget warns, judged from
the lines the OCR found; where it finds no text the guard says it could not judge."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image

from desktop.cli import main
from desktop.cli.ask_checks import json_fields, text_sizes, unjudged_note, warning
from desktop.core.engine.vision import VisionSpec, smart_resize
from desktop.core.images import load_image
from desktop.core.legibility import (
    MIN_READABLE_LINE_PX,
    NoTextFound,
    line_heights,
    text_size,
)
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.models import OcrResult
from desktop.core.ocr.rendered_pages import Page, font, render_lines
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


# --- wide pages (issue 50): a 4K screen at 100 %, its text 11 px ---------------------------

LOG_LINES = [
    "2025-10-14 09:{:02d}:07.412 INFO [worker-3] sync.upload: uploaded /srv/reports/q3.csv "
    "(48213 bytes) in 0.42 s",
    "2025-10-14 09:{:02d}:09.118 WARN [http-nio-8080-exec-6] api.orders: GET "
    "/api/v2/orders/50260?include=lines -> 404 in 893 ms",
    "2025-10-14 09:{:02d}:12.904 INFO [scheduler-2] db.pool: connection pool: 25 active, "
    "6 idle, 3 waiting (max 100)",
]
SCREEN_4K = (3840, 2160)


@dataclass(frozen=True)
class Named:
    """What text_sizes needs of an image: its name and size."""

    name: str
    size: tuple[int, int]


SMALL, PHOTO_4K = Named("icons.png", (640, 480)), Named("photo.png", SCREEN_4K)


def terminal_4k(size: int = 11) -> Image.Image:
    """A dark terminal maximised on a 4K screen at 100 % (bench/ocr_styles_wide.py's kind of
    page): 24 log lines of DejaVu Sans Mono, each line a terminal cell (ascent + descent) tall."""
    page = Page(*SCREEN_4K, background=(30, 30, 30), ink=(204, 204, 204))
    face = font("mono", size)
    step = sum(face.getmetrics())
    for number in range(24):
        page.text(4, 8 + number * step, LOG_LINES[number % 3].format(31 + number // 3), face)
    return page.image


def ask_json(path, *extra: str, capsys) -> tuple[dict, str]:
    args = ["ask", str(path), "-q", "Which request failed?", "--json", "--max-new-tokens", "2"]
    assert main([*args, *extra]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), err


def test_the_ocr_finds_every_11px_line_of_a_4k_page_at_its_own_height():
    result = OcrEngine(threads=2).extract(load_image(terminal_4k()))
    heights = line_heights(result)
    assert len(heights) == 24  # one box per line: the tiles' second look found them all
    assert all(11 <= height <= 2.2 * 11 for height in heights), heights
    assert "api.orders: GET /api/v2/orders/50260?include=lines -> 404" in result.text()


def test_a_4k_page_of_11px_text_asked_at_a_small_budget_warns(models_dir, tmp_path, capsys):
    path = tmp_path / "terminal-4k.png"
    terminal_4k().save(path)
    data, err = ask_json(path, "--max-visual-tokens", "256", capsys=capsys)
    [size] = data["readability"]
    assert data["text_too_small"] is True and size["too_small"] is True
    assert size["text_found"] is True
    # Judged from the lines found, 11 px text in boxes of about its size, not from the page.
    assert 11 <= size["line_px"] <= 2.2 * 11
    new_height, _ = smart_resize(SCREEN_4K[1], SCREEN_4K[0], 32, 1, 256 * 32 * 32)
    assert size["predicted_px"] == pytest.approx(size["line_px"] * new_height / 2160, abs=0.1)
    assert size["predicted_px"] < MIN_READABLE_LINE_PX / 2  # a quarter of the page's height
    [line] = [line for line in err.splitlines() if "too small to read" in line]
    assert f"--max-visual-tokens {size['detail_tokens']}" in line and "--region" in line
    # The budget it suggests would keep the median line readable on this page.
    better = text_size([round(size["line_px"])] * 3, SCREEN_4K, "p", spec(size["detail_tokens"]))
    assert better is not None and not better.too_small
    # At the default budget too: 4K shrinks to about 0.4x, 11 px text's lines under 8 px.
    data, err = ask_json(path, capsys=capsys)
    assert data["text_too_small"] is True and "too small to read" in err
    assert data["readability"][0]["line_px"] == size["line_px"]


def test_a_page_where_the_ocr_finds_no_text_is_not_passed_as_readable(models_dir, tmp_path, capsys):
    # A 4K screen of a smooth gradient (a wallpaper): not blank, so the OCR looks at all of
    # it, but it holds no line to measure.
    ramp = np.linspace(40, 200, SCREEN_4K[0], dtype=np.uint8)
    path = tmp_path / "wallpaper.png"
    Image.fromarray(np.tile(ramp, (SCREEN_4K[1], 1))).convert("RGB").save(path)
    data, err = ask_json(path, "--max-visual-tokens", "256", capsys=capsys)
    [size] = data["readability"]
    assert size["text_found"] is False and size["too_small"] is None
    assert size["line_px"] is None and size["predicted_px"] is None
    assert data["text_too_small"] is None  # not known: neither true nor false
    assert "too small to read" not in err
    [note] = [line for line in err.splitlines() if "found no text in wallpaper.png" in line]
    assert "could not judge" in note and "--region" in note
    assert f"--max-visual-tokens {size['detail_tokens']}" in note


def test_what_the_guard_says_of_images_without_text_and_with_it():
    checked = text_sizes([OcrResult([], 1, 1, 0.0)] * 2, [SMALL, PHOTO_4K], (), spec(1280))
    assert [type(size) for size in checked] == [NoTextFound, NoTextFound]
    small, large = checked
    assert not small.shrunk and large.shrunk  # 640 x 480 fits the default budget
    assert unjudged_note([small]) is None  # nothing a budget or a region could show better
    assert "photo.png" in (unjudged_note(checked) or "") and "icons.png" not in (
        unjudged_note(checked) or ""
    )
    assert large.detail_tokens == 8100  # the 4K image at its own size
    assert warning(checked) is None  # no warning of small text: none was measured
    assert json_fields(checked, None, ())["text_too_small"] is None
    readable = text_size([40] * 3, PHOTO_4K.size, "slide.png", spec(1280))
    assert readable is not None and not readable.too_small
    assert json_fields([readable], None, ())["text_too_small"] is False
    assert json_fields([readable, large], None, ())["text_too_small"] is None
    tiny = text_size([12] * 3, PHOTO_4K.size, "sheet.png", spec(256))
    assert tiny is not None and tiny.too_small
    assert json_fields([tiny, large], None, ())["text_too_small"] is True
