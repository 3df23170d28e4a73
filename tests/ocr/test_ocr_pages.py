"""Whole pages seen to go wrong in issue 36, read by the real OCR: an e-mail pager and a terminal
UI (FP32 models: the same text on every CPU), and a page with a Data Matrix, an Aztec code and
a PDF417 drawn by zxing-cpp's writer, whose modules gave stray "text" ("1", "國")."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest
from code_images import zxing_image
from PIL import Image, ImageDraw

from bench.ocr_styles_pages import make_pager, make_tui
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.accuracy import cer
from desktop.core.ocr.models import TextFragment
from desktop.core.ocr.rendered_pages import font

TICKET = "TICKET 4711 ZURICH HB-BERN"
BOARDING = "M1MUSTER/ANNA EABC123 ZRHLHRLX 0318"


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    ocr = OcrEngine(precision="fp32")
    ocr.warm_up()
    return ocr


@pytest.mark.parametrize("seed", [20, 28])  # mutt-style aligned headers, light and dark
def test_a_pagers_headers_and_quotes_read_as_lines(engine: OcrEngine, seed: int) -> None:
    """No tab-separated cells, no blank line inside the header block or the quoted reply, and
    every quoted line keeps its "> " or "> > "."""
    page = make_pager(random.Random(f"{seed}:make_pager"), "pager")
    lines = engine.extract(page.image).text().splitlines()
    assert not [line for line in lines if "\t" in line]
    headers = [n for n, line in enumerate(lines) if line.split(":")[0] in {"Date", "From", "To"}]
    assert headers == list(range(headers[0], headers[0] + 3)), lines
    quoted = [n for n, line in enumerate(lines) if line.startswith(">")]
    truth = [line for line in page.reference.splitlines() if line.startswith(">")]
    assert quoted == list(range(quoted[0], quoted[0] + len(truth))), lines
    for number, line in zip(quoted, truth, strict=True):
        prefix = line[: len(line) - len(line.lstrip("> "))]
        assert lines[number].startswith(prefix), (lines[number], line)


def test_a_terminal_uis_key_bar_comes_last(engine: OcrEngine) -> None:
    page = make_tui(random.Random("20:make_tui"), "tui")
    text = engine.extract(page.image).text()
    assert text.splitlines()[-1].split() == page.reference.splitlines()[-1].split()
    assert cer(text, page.reference) < 0.01


def page_with_three_codes(module: int) -> Image.Image:
    page = Image.new("RGB", (1280, 800), "white")
    draw = ImageDraw.Draw(page)
    draw.text((40, 24), "Your parcel and boarding pass", font=font("sans", 26), fill="black")
    page.paste(zxing_image("DataMatrix", "PARCEL 0012 4711 ZURICH", module=module), (40, 100))
    page.paste(zxing_image("Aztec", BOARDING, module=module), (460, 100))
    page.paste(zxing_image("PDF417", TICKET, module=module), (40, 480))
    draw.text((40, 740), "Keep this page until delivery.", font=font("sans", 22), fill="black")
    return page


def test_what_is_read_inside_a_decoded_code_is_not_text() -> None:
    """The layout gets no fragment whose middle lies in a decoded code's box: a "1" read off the
    PDF417's modules is dropped, the lines around the codes stay."""
    page = page_with_three_codes(module=3)
    gray = cv2.cvtColor(np.array(page), cv2.COLOR_RGB2GRAY)
    fragments = [
        TextFragment.from_box("Your parcel and boarding pass", (37, 24, 434, 57)),
        TextFragment.from_box("1", (152, 522, 160, 532)),  # inside the PDF417
        TextFragment.from_box("國", (38, 96, 83, 142)),  # on the Data Matrix's corner
        TextFragment.from_box("Keep this page until delivery.", (38, 738, 359, 771)),
    ]
    result = OcrEngine.result_from_fragments(
        fragments, page.size, started=0.0, source_name="codes.png", gray=gray
    )
    assert sorted(code.kind for code in result.codes) == ["Aztec", "Data Matrix", "PDF417"]
    assert [line.text for line in result.lines] == [
        "Your parcel and boarding pass",
        "Keep this page until delivery.",
    ]


@pytest.mark.parametrize("module", [2, 3, 4])
def test_a_page_with_three_codes_reads_only_its_two_lines(module: int) -> None:
    """The default models (INT8 read "國", "P 10", "15 T T" off the modules here)."""
    result = OcrEngine().extract(page_with_three_codes(module))
    assert [code.text for code in result.codes if code.kind != "Data Matrix"] == [
        BOARDING,
        TICKET,
    ]
    assert [line.text for line in result.lines] == [
        "Your parcel and boarding pass",
        "Keep this page until delivery.",
    ]
