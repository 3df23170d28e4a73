"""QR codes and barcodes as part of every OCR result: generated codes (URL, Unicode text,
EAN-13, Code 128) in a page with text around them are decoded exactly, in images, scanned
PDFs, batch outputs and `desklens ocr`; a page without codes reports none."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from code_images import (
    CODE128,
    EAN13,
    UNICODE,
    URL,
    barcode_image,
    page_with_codes,
    page_without_codes,
    qr_image,
)
from PIL import Image, ImageDraw

from desktop.cli import exit_codes, main
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.batch import run_batch
from desktop.core.ocr.code128 import read_code128
from desktop.core.ocr.codes import (
    OcrCode,
    codes_block,
    find_codes,
    finder_patterns,
    merge_side_by_side,
)
from desktop.core.ocr.pdf import read_pdf

EXPECTED = [("QR", URL), ("QR", UNICODE), ("EAN-13", EAN13), ("Code 128", CODE128)]


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    ocr = OcrEngine()
    ocr.warm_up()
    return ocr


def gray(image: Image.Image) -> np.ndarray:
    return cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2GRAY)


def kinds_and_texts(codes: list[OcrCode]) -> list[tuple[str, str]]:
    return [(code.kind, code.text) for code in codes]


def test_codes_in_a_page_with_text_are_decoded_exactly(engine: OcrEngine) -> None:
    result = engine.extract(page_with_codes(), name="order.png")
    assert kinds_and_texts(result.codes) == EXPECTED
    assert "Scan to open the order page" in result.text()  # the text around is read too
    text_block = result.text().split("\n\n")[-1]
    assert text_block.splitlines() == [f"{kind}: {text}" for kind, text in EXPECTED]
    assert f"QR: <{URL}>" in result.markdown()  # a link in Markdown; plain text stays plain
    assert f"QR: {UNICODE}" in result.markdown()
    listed = json.loads(result.to_json())["codes"]
    assert [(c["kind"], c["text"]) for c in listed] == EXPECTED
    for code, box in zip(result.codes, (c["box"] for c in listed), strict=True):
        left, top, right, bottom = box
        assert 0 <= left < right <= result.width and 0 <= top < bottom <= result.height
        assert tuple(box) == code.box


def test_a_page_without_codes_reports_none(engine: OcrEngine) -> None:
    result = engine.extract(page_without_codes(), name="invoice.png")
    assert result.codes == []
    assert json.loads(result.to_json())["codes"] == []
    assert "QR:" not in result.text() and "Total due" in result.text()
    assert result.text() == result.text().rstrip()  # no empty codes block appended


@pytest.mark.parametrize("size", [(1200, 760), (520, 300)])  # a page, a small capture
def test_code128_in_each_code_set(size: tuple[int, int]) -> None:
    # python-barcode writes digit runs in set C, mixed text in set B, a control character in
    # set A; the reader follows the switches between them.
    for text in ("12345678", "Order 7781-b", "AB\tC", "x9876543210y"):
        image = Image.new("RGB", size, "white")
        ImageDraw.Draw(image).text((20, 10), "Shipping label", fill="black")
        image.paste(barcode_image("code128", text), (40, 60))
        codes = find_codes(gray(image))
        assert kinds_and_texts(codes) == [("Code 128", text)]


def test_a_small_capture_of_a_qr_code_is_decoded() -> None:
    image = Image.new("RGB", (260, 200), "white")
    image.paste(qr_image(URL, module=3), (20, 20))
    codes = find_codes(gray(image))
    assert kinds_and_texts(codes) == [("QR", URL)]
    assert all(0 <= v <= 260 for v in codes[0].box)


def test_code128_reader_refuses_what_is_not_one() -> None:
    stripes = np.full((60, 400), 255, np.uint8)
    stripes[:, 40:360:6] = 0  # even bars: no start symbol, no checksum
    assert read_code128(stripes, (30, 5, 370, 55)) is None


def test_halves_of_one_barcode_are_joined_but_rows_stay_apart() -> None:
    halves = [(742, 122, 876, 174), (873, 122, 945, 174)]
    assert merge_side_by_side(halves) == [(742, 122, 945, 174)]
    rows = [(10, 10, 200, 60), (10, 300, 200, 350)]
    assert merge_side_by_side(rows) == rows


def test_codes_block_renders_links_only_in_markdown() -> None:
    codes = [OcrCode("QR", URL, (0, 0, 9, 9)), OcrCode("EAN-13", EAN13, (0, 0, 9, 9))]
    assert codes_block(codes, markdown=False) == f"QR: {URL}\nEAN-13: {EAN13}"
    assert codes_block(codes, markdown=True) == f"QR: <{URL}>\nEAN-13: {EAN13}"
    assert codes_block([], markdown=True) == ""


def test_scanned_pdf_and_batch_outputs_carry_the_codes(engine: OcrEngine, tmp_path: Path) -> None:
    pdf = tmp_path / "scan.pdf"
    page_with_codes().save(pdf, resolution=72)  # an image-only PDF page: read by OCR
    document = read_pdf(engine, pdf)
    assert kinds_and_texts(document.pages[0].codes) == EXPECTED

    page_with_codes().save(tmp_path / "order.png")
    page_without_codes().save(tmp_path / "plain.png")
    out = tmp_path / "out"
    report = run_batch(engine, [tmp_path / "order.png", tmp_path / "plain.png"], out_dir=out,
                       fmt="json")  # fmt: skip
    assert not report.failed
    order = json.loads((out / "order.json").read_text())["pages"][0]["codes"]
    assert [(c["kind"], c["text"]) for c in order] == EXPECTED
    assert json.loads((out / "plain.json").read_text())["pages"][0]["codes"] == []


def test_desklens_ocr_prints_the_codes_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "order.png"
    page_with_codes().save(path)
    assert main(["ocr", "--no-service", str(path)]) == exit_codes.OK
    printed = capsys.readouterr().out
    assert f"QR: {URL}\nQR: {UNICODE}\nEAN-13: {EAN13}\nCode 128: {CODE128}" in printed


def test_the_qr_detector_runs_only_where_finder_patterns_are() -> None:
    assert finder_patterns(gray(page_with_codes())) >= 6  # two QR codes, three corners each
    assert finder_patterns(gray(page_without_codes())) == 0  # text and a box: none
