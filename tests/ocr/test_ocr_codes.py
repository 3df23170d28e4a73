"""QR codes and barcodes as part of every OCR result, read with zxing-cpp: each format drawn
into a screenshot-like page with text around it (upright, turned 90°, light on a dark theme,
with 2 px modules) is decoded exactly, in images, scanned PDFs, batch outputs, the API and
`desklens ocr`; structured payloads are spelled out beside the raw text; a page without
codes reports none. The payload parsers alone: tests/ocr/test_code_payloads.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pytest
from code_images import (
    CODE128,
    EAN13,
    GS1_ELEMENTS,
    GS1_TEXT,
    UNICODE,
    URL,
    WIFI,
    barcode_image,
    page_with_codes,
    page_with_payloads,
    page_without_codes,
    qr_image,
    screenshot,
    zxing_image,
)
from PIL import Image, ImageOps

from desktop.cli import exit_codes, main
from desktop.core.api.ocr import OcrCall, read
from desktop.core.images import load_image
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.batch import run_batch
from desktop.core.ocr.code_payloads import Payload
from desktop.core.ocr.codes import KINDS, OcrCode, codes_block, find_codes
from desktop.core.ocr.formats import OutputFormat
from desktop.core.ocr.pdf import read_pdf

EXPECTED = [("QR", URL), ("QR", UNICODE), ("EAN-13", EAN13), ("Code 128", CODE128)]
BOARDING = "M1MUSTER/ANNA EABC123 ZRHLHRLX 0318"
TICKET = "TICKET 4711 ZURICH HB-BERN"
# kind, text as read, zxing-cpp's format name, the code drawn (2 px modules). The python-barcode
# and qrcode encoders draw what they can; zxing-cpp's writer the rest.
FORMATS: list[tuple[str, str, str, Callable[[], Image.Image]]] = [
    ("QR", URL, "QR Code", lambda: qr_image(URL, module=2)),
    ("Micro QR", "DESK42", "Micro QR Code", lambda: zxing_image("MicroQRCode", "DESK42")),
    ("rMQR", "DESKLENS-42", "rMQR Code", lambda: zxing_image("RMQRCode", "DESKLENS-42")),
    ("Aztec", BOARDING, "Aztec", lambda: zxing_image("Aztec", BOARDING)),
    ("Data Matrix", GS1_TEXT, "Data Matrix",
     lambda: zxing_image("DataMatrix", GS1_ELEMENTS, gs1=True)),
    ("PDF417", TICKET, "PDF417", lambda: zxing_image("PDF417", TICKET)),
    ("Code 128", CODE128, "Code 128", lambda: barcode_image("code128", CODE128)),
    ("Code 39", "PARCEL-4711", "Code 39",
     lambda: barcode_image("code39", "PARCEL-4711", add_checksum=False)),
    ("Code 93", "PARCEL-93", "Code 93", lambda: zxing_image("Code93", "PARCEL-93")),
    ("Codabar", "A40156B", "Codabar", lambda: barcode_image("codabar", "A40156B")),
    ("EAN-8", "96385074", "EAN-8", lambda: barcode_image("ean8", "9638507")),
    ("EAN-13", EAN13, "EAN-13", lambda: barcode_image("ean13", EAN13[:12])),
    ("UPC-A", "036000291452", "EAN-13", lambda: barcode_image("upca", "03600029145")),
    ("UPC-E", "01234565", "UPC-E", lambda: zxing_image("UPCE", "0123456")),
    ("ITF", "12345678901231", "ITF", lambda: barcode_image("itf", "12345678901231")),
    ("DataBar", "(01)09521234543213", "DataBar Omni",
     lambda: zxing_image("DataBar", "0109521234543213")),
    ("DataBar", "(01)98898765432106(3202)012345", "DataBar Expanded",
     lambda: zxing_image("DataBarExp", "(01)98898765432106(3202)012345")),
]  # fmt: skip
MATRIX = {"QR", "Micro QR", "rMQR", "Aztec", "Data Matrix"}  # found inverted too
VIEWS = {
    "upright": {},
    "turned 90°": {"rotate": 90},
    "dark theme": {"dark": True},
    "inverted on dark": {"dark": True, "invert": True},
    "inverted on dark, turned 270°": {"dark": True, "invert": True, "rotate": 270},
}


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    ocr = OcrEngine()
    ocr.warm_up()
    return ocr


def gray(image: Image.Image) -> np.ndarray:
    return cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2GRAY)


def kinds_and_texts(codes: list[OcrCode]) -> list[tuple[str, str]]:
    return [(code.kind, code.text) for code in codes]


# Light bars on a dark page are not read (codes.py: apps draw barcodes on a light label, and
# the search would cost more), so only the matrix codes are tried inverted.
CASES = [
    pytest.param(*case, view, id=f"{case[0]}-{case[2]}-{view}")
    for case in FORMATS
    for view in VIEWS
    if "inverted" not in view or case[0] in MATRIX
]


@pytest.mark.parametrize(("kind", "text", "format_name", "draw", "view"), CASES)
def test_each_format_in_a_screenshot_is_read_exactly(kind, text, format_name, draw, view) -> None:
    page = screenshot(draw(), **VIEWS[view])
    codes = find_codes(gray(page))
    assert kinds_and_texts(codes) == [(kind, text)]
    code = codes[0]
    assert code.format == format_name and code.kind in KINDS
    left, top, right, bottom = code.box
    assert 0 <= left < right <= page.width and 0 <= top < bottom <= page.height
    assert code.box[:2] >= (40, 150)  # where the code was pasted, not the text above it
    assert len(code.position) == 4 and {x for x, _ in code.position} <= set(range(left, right + 1))


def test_a_turned_code_says_so_in_its_corners() -> None:
    upright = find_codes(gray(screenshot(zxing_image("Aztec", BOARDING))))[0]
    turned = find_codes(gray(screenshot(zxing_image("Aztec", BOARDING), rotate=90)))[0]
    (ux, uy), (tx, ty) = upright.position[0], turned.position[0]
    assert ux < upright.position[1][0] and uy == upright.position[1][1]  # top edge: rightwards
    assert tx == turned.position[1][0] and ty > turned.position[1][1]  # turned: upwards


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
    assert [c["format"] for c in listed] == ["QR Code", "QR Code", "EAN-13", "Code 128"]
    assert all(c["payload"] is None for c in listed)
    for code, box in zip(result.codes, (c["box"] for c in listed), strict=True):
        left, top, right, bottom = box
        assert 0 <= left < right <= result.width and 0 <= top < bottom <= result.height
        assert tuple(box) == code.box
    assert listed[0]["position"] == [list(point) for point in result.codes[0].position]


def test_structured_payloads_are_spelled_out_beside_the_raw_text(engine: OcrEngine) -> None:
    result = engine.extract(page_with_payloads(), name="parcel.png")
    kinds = [code.kind for code in result.codes]
    assert sorted(kinds) == ["Aztec", "Data Matrix", "PDF417", "QR"]
    text = result.text()
    assert f"QR: {WIFI}\n  Network: Cafe Guest;5G\n  Password: pa;ss:w0rd\\x\n" in text
    assert (
        f"Data Matrix: {GS1_TEXT}\n  GTIN (01): 04012345678901\n  Expiry (17): 2027-12-31" in text
    )
    assert f"Aztec: {BOARDING}" in text and f"PDF417: {TICKET}" in text
    assert "- Network: Cafe Guest;5G\n- Password: pa;ss:w0rd\\x" in result.markdown()
    codes = {code["kind"]: code for code in json.loads(result.to_json())["codes"]}
    assert codes["QR"]["text"] == WIFI  # the raw text beside the fields
    assert codes["QR"]["payload"]["type"] == "wifi"
    assert {"name": "Serial (21)", "value": "SN-0042"} in codes["Data Matrix"]["payload"]["fields"]
    assert codes["Aztec"]["payload"] is None


def test_a_page_without_codes_reports_none(engine: OcrEngine) -> None:
    result = engine.extract(page_without_codes(), name="invoice.png")
    assert result.codes == []
    assert json.loads(result.to_json())["codes"] == []
    assert "QR:" not in result.text() and "Total due" in result.text()
    assert result.text() == result.text().rstrip()  # no empty codes block appended


@pytest.mark.parametrize("turn", ["light", "dark", "turned"])
def test_text_pages_give_no_codes(turn: str) -> None:
    page = page_without_codes()
    page = ImageOps.invert(page) if turn == "dark" else page
    page = page.rotate(90, expand=True) if turn == "turned" else page
    assert find_codes(gray(page)) == []


def test_pages_of_odd_shapes_give_no_codes_and_no_error() -> None:
    for shape in ((0, 0), (1, 1), (1, 5000), (3000, 4), (64, 64)):
        assert find_codes(np.full(shape, 255, np.uint8)) == []
    noise = np.random.default_rng(7).integers(0, 256, (400, 600), dtype=np.uint8)
    assert find_codes(noise) == []


def test_two_codes_of_one_kind_on_a_page_are_both_read() -> None:
    page = Image.new("RGB", (900, 420), "white")
    page.paste(zxing_image("DataMatrix", "LOT-A", module=3), (60, 80))
    page.paste(zxing_image("DataMatrix", "LOT-B", module=3), (520, 80))
    assert kinds_and_texts(find_codes(gray(page))) == [("Data Matrix", "LOT-A"),
                                                      ("Data Matrix", "LOT-B")]  # fmt: skip


def test_codes_block_renders_links_only_in_markdown() -> None:
    codes = [OcrCode("QR", URL, (0, 0, 9, 9)), OcrCode("EAN-13", EAN13, (0, 0, 9, 9))]
    assert codes_block(codes, markdown=False) == f"QR: {URL}\nEAN-13: {EAN13}"
    assert codes_block(codes, markdown=True) == f"QR: <{URL}>\nEAN-13: {EAN13}"
    assert codes_block([], markdown=True) == ""


def test_codes_block_lists_a_payloads_fields_under_its_code() -> None:
    contact = Payload("contact", (("Name", "Anna"), ("Website", "https://example.ch"),
                                  ("Note", "a\nb")))  # fmt: skip
    codes = [OcrCode("QR", "MECARD:...", (0, 0, 9, 9), payload=contact),
             OcrCode("EAN-8", "96385074", (0, 0, 9, 9))]  # fmt: skip
    assert codes_block(codes, markdown=False) == (
        "QR: MECARD:...\n  Name: Anna\n  Website: https://example.ch\n  Note: a / b\n"
        "EAN-8: 96385074"
    )
    assert codes_block(codes, markdown=True) == (
        "QR: MECARD:...\n- Name: Anna\n- Website: <https://example.ch>\n- Note: a / b\n\n"
        "EAN-8: 96385074"  # a blank line ends the list
    )
    assert codes[0].to_dict()["payload"] == {
        "type": "contact",
        "fields": [{"name": "Name", "value": "Anna"},
                   {"name": "Website", "value": "https://example.ch"},
                   {"name": "Note", "value": "a\nb"}],
    }  # fmt: skip


def test_scanned_pdf_and_batch_outputs_carry_the_codes(engine: OcrEngine, tmp_path: Path) -> None:
    pdf = tmp_path / "scan.pdf"
    page_with_codes().save(pdf, resolution=72)  # an image-only PDF page: read by OCR
    document = read_pdf(engine, pdf)
    assert kinds_and_texts(document.pages[0].codes) == EXPECTED

    page_with_codes().save(tmp_path / "order.png")
    page_without_codes().save(tmp_path / "plain.png")
    out = tmp_path / "out"
    report = run_batch(engine, [tmp_path / "order.png", tmp_path / "plain.png"], out_dir=out,
                       fmt=OutputFormat.JSON)  # fmt: skip
    assert not report.failed
    order = json.loads((out / "order.json").read_text())["pages"][0]["codes"]
    assert [(c["kind"], c["text"]) for c in order] == EXPECTED
    assert json.loads((out / "plain.json").read_text())["pages"][0]["codes"] == []


def test_the_api_answers_with_the_codes_and_their_fields(engine: OcrEngine) -> None:
    image = load_image(page_with_payloads(), name="parcel.png")
    text = read(engine, OcrCall(image, OutputFormat.TEXT)).text
    assert "  Network: Cafe Guest;5G" in text and f"Data Matrix: {GS1_TEXT}" in text
    document = read(engine, OcrCall(image, OutputFormat.JSON)).body()["document"]
    assert {c["kind"] for c in document["pages"][0]["codes"]} == {"QR", "Data Matrix", "Aztec",
                                                                  "PDF417"}  # fmt: skip


def test_desklens_ocr_prints_the_codes_block(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "order.png"
    page_with_codes().save(path)
    assert main(["ocr", "--no-service", str(path)]) == exit_codes.OK
    printed = capsys.readouterr().out
    assert f"QR: {URL}\nQR: {UNICODE}\nEAN-13: {EAN13}\nCode 128: {CODE128}" in printed
