"""Codes never stop the text: a page longer than zxing-cpp's 65,535 px on a side (a scrolling
capture, a one-line strip) is searched in overlapping pieces, codes past the limit and on a
piece's edge are read once with the page's own coordinates, and a failing code search leaves
the text read."""

from __future__ import annotations

import logging

import cv2
import numpy as np
import pytest
from code_images import qr_image, zxing_image
from PIL import Image, ImageDraw

from desktop.core.ocr import OcrEngine
from desktop.core.ocr.codes import MAX_SEARCH_SIDE, PIECE_OVERLAP, find_codes


def gray(image: Image.Image) -> np.ndarray:
    return cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2GRAY)


@pytest.mark.parametrize("shape", [(6, 100_000), (90_000, 7), (65_536, 3), (2, 200_000)])
def test_strips_past_the_readers_limit_give_no_codes_and_no_error(shape: tuple[int, int]) -> None:
    assert find_codes(np.full(shape, 255, np.uint8)) == []


def test_a_scrolling_capture_past_the_limit_has_its_codes_read_once_where_they_are() -> None:
    page = np.full((70_000, 1080), 255, np.uint8)
    # The top of each code: before the limit, in the overlap, across the first piece's end, after.
    placed = {
        "FIRST": 1_000,
        "OVERLAP": MAX_SEARCH_SIDE - PIECE_OVERLAP // 2,
        "EDGE": MAX_SEARCH_SIDE - 150,
        "LAST": 69_500,
    }
    for text, top in placed.items():
        code = gray(qr_image(text, module=3))
        page[top : top + code.shape[0], 100 : 100 + code.shape[1]] = code
    codes = find_codes(page)
    assert [(code.kind, code.text) for code in codes] == [("QR", text) for text in placed]
    for code, top in zip(codes, placed.values(), strict=True):
        assert top <= code.box[1] < top + 40 and 100 <= code.box[0] < 140  # page coordinates
        assert code.box[3] <= page.shape[0]


def test_a_wide_strip_has_its_barcode_read_past_the_limit() -> None:
    code = gray(zxing_image("Code128", "STRIP-77", module=2))
    page = np.full((code.shape[0], 100_000), 255, np.uint8)
    page[:, 90_000 : 90_000 + code.shape[1]] = code
    [found] = find_codes(page)
    assert (found.kind, found.text) == ("Code 128", "STRIP-77")
    assert 90_000 <= found.box[0] < 90_000 + code.shape[1]


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return OcrEngine(threads=2)


def test_a_long_strip_reads_its_text_and_its_code_past_the_limit(engine: OcrEngine) -> None:
    code = zxing_image("Code128", "STRIP-77", module=2)
    page = Image.new("RGB", (100_000, code.height), "white")
    draw = ImageDraw.Draw(page)
    draw.text((200, 20), "Order 4711", fill="black", font_size=28)
    draw.text((95_000, 20), "Paid 12.50", fill="black", font_size=28)
    page.paste(code, (80_000, 0))
    result = engine.extract(page, name="strip.png")
    # Both words read (their order across a 100,000 px strip is the layout's business) and
    # the barcode past the reader's limit found.
    assert "Order 4711" in result.text() and "Paid 12.50" in result.text()
    assert [(code.kind, code.text) for code in result.codes] == [("Code 128", "STRIP-77")]
    assert 80_000 <= result.codes[0].box[0] < 80_000 + code.width


def test_a_failing_code_search_leaves_the_text_read(
    engine: OcrEngine, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import zxingcpp

    def refuse(*_args: object, **_kwargs: object) -> list[object]:
        raise ValueError("Maximum image width/height is 65535")

    monkeypatch.setattr(zxingcpp, "read_barcodes", refuse)
    page = Image.new("RGB", (900, 300), "white")
    ImageDraw.Draw(page).text((40, 100), "Invoice total 12.50", fill="black", font_size=32)
    with caplog.at_level(logging.WARNING):
        result = engine.extract(page, name="invoice.png")
    assert "Invoice total 12.50" in result.text() and result.codes == []
    assert "invoice.png" in caplog.text and "65535" in caplog.text
