"""Searchable PDFs (issue 28): PDFium extracts the text layer and renders the pages, qpdf
and pypdf (strict) check the files; the words lie on their glyphs, the pages look unchanged,
pages with text pass through, a 50-page scan streams in bounded memory."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
from limited import run_limited
from ocr_pages import TABLE, ruled_table
from PIL import Image, ImageDraw
from pypdf import PdfReader, PdfWriter

from desktop.cli import main
from desktop.core.ocr.engine import OcrEngine
from desktop.core.ocr.models import OcrResult
from desktop.core.ocr.rendered_pages import font, render_lines
from desktop.core.ocr.searchable_pdf import write_searchable

WORDS_LINES = [
    "Invoice 4711 for the batch of April",
    "Total amount due 12,450.50 EUR by Friday",
    "Ship to: Mrs Jane Müller, 12 Long Road",
]
POINTS_PER_PIXEL = 72 / 96  # an image without a DPI is placed at 96 dpi
WORD_TOLERANCE_PT = 4.0


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return OcrEngine()


def words_page(path: Path, face_key: str) -> list[tuple[str, float, float, float, float]]:
    """Draws WORDS_LINES; returns each word's ink box in pixels as drawn."""
    face = font(face_key, 22)
    image = Image.new("RGB", (760, 40 + 44 * len(WORDS_LINES)), "white")
    draw = ImageDraw.Draw(image)
    words = []
    for number, line in enumerate(WORDS_LINES):
        x, y = 30, 24 + 44 * number
        draw.text((x, y), line, font=face, fill="black")
        end = 0
        for word in line.split(" "):
            start = line.index(word, end)
            end = start + len(word)
            _, top, _, bottom = draw.textbbox((x, y), word, font=face)
            left, right = x + face.getlength(line[:start]), x + face.getlength(line[:end])
            words.append((word, left, top, right, bottom))
    image.save(path)
    return words


def layer_words(page: pdfium.PdfPage) -> list[tuple[str, tuple[float, float, float, float]]]:
    """The text layer's words with their boxes in points (left, bottom, right, top)."""
    textpage = page.get_textpage()
    words, text, boxes = [], "", []
    for index in range(textpage.count_chars()):
        char = textpage.get_text_range(index, 1)
        if char.isspace():
            if text:
                words.append((text, _union(boxes)))
            text, boxes = "", []
            continue
        text += char
        boxes.append(textpage.get_charbox(index, loose=True))
    if text:
        words.append((text, _union(boxes)))
    return words


def _union(boxes: list[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def rendered(pdf_path: Path, index: int, scale: float) -> np.ndarray:
    document = pdfium.PdfDocument(str(pdf_path))
    try:
        page = document[index]
        return np.asarray(page.render(scale=scale).to_pil().convert("RGB"), dtype=np.int16)
    finally:
        document.close()


def assert_valid_pdf(path: Path) -> None:
    PdfReader(path, strict=True).pages[0].extract_text()
    qpdf = shutil.which("qpdf")
    assert qpdf is not None, "qpdf is installed by scripts/dev.sh (system_deps)"
    check = subprocess.run([qpdf, "--check", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("face_key", ["arial", "sans"])
def test_a_searchable_pdf_of_an_image_has_its_words_on_their_glyphs(
    engine: OcrEngine, tmp_path: Path, face_key: str
) -> None:
    image_path, out = tmp_path / "letter.png", tmp_path / "letter.pdf"
    drawn = words_page(image_path, face_key)
    document = write_searchable(engine, image_path, out).document

    pdf = pdfium.PdfDocument(str(out))
    page = pdf[0]
    layer = page.get_textpage().get_text_range()
    assert layer.split() == document.text().split()  # the OCR's text, in reading order
    assert document.text().split() == " ".join(WORDS_LINES).split()
    height = page.get_height()
    for (word, left, top, right, bottom), (text, box) in zip(drawn, layer_words(page), strict=True):
        assert text == word
        drawn_pt = (
            left,
            height / POINTS_PER_PIXEL - bottom,
            right,
            height / POINTS_PER_PIXEL - top,
        )
        drawn_pt = tuple(v * POINTS_PER_PIXEL for v in drawn_pt)
        assert abs(box[0] - drawn_pt[0]) <= WORD_TOLERANCE_PT, (word, box, drawn_pt)
        assert abs(box[2] - drawn_pt[2]) <= WORD_TOLERANCE_PT, (word, box, drawn_pt)
        middle = (box[1] + box[3]) / 2
        assert drawn_pt[1] - WORD_TOLERANCE_PT <= middle <= drawn_pt[3] + WORD_TOLERANCE_PT
    pdf.close()

    original = np.asarray(Image.open(image_path).convert("RGB"), dtype=np.int16)
    assert np.abs(rendered(out, 0, 1 / POINTS_PER_PIXEL) - original).max() <= 2  # unchanged
    assert_valid_pdf(out)


def test_a_scanned_pdf_gains_a_text_layer_and_pages_with_text_pass_through(
    engine: OcrEngine, tmp_path: Path
) -> None:
    from ocr_pages import text_layer_pdf

    letter, scan = tmp_path / "letter.pdf", tmp_path / "scan.pdf"
    letter.write_bytes(text_layer_pdf(["A typed letter with its own text layer."]))
    render_lines(WORDS_LINES, width=760).save(scan, "PDF", resolution=96)
    mixed = tmp_path / "mixed.pdf"
    writer = PdfWriter()
    writer.append(letter)
    writer.append(scan)
    writer.write(mixed)

    calls: list[object] = []

    class Counting:
        def __getattr__(self, name: str) -> object:
            return getattr(engine, name)

        def extract(self, image: object) -> OcrResult:
            calls.append(image)
            return engine.extract(image)

    out = tmp_path / "searchable.pdf"
    document = write_searchable(Counting(), mixed, out).document  # type: ignore[arg-type]
    assert len(calls) == 1  # the typed page is not read again
    assert [page.text_layer for page in document.pages] == [True, False]
    assert out.read_bytes().startswith(mixed.read_bytes())  # an update after the original

    pdf = pdfium.PdfDocument(str(out))
    layer = pdf[1].get_textpage().get_text_range()
    assert layer.split() == document.pages[1].text().split()
    assert "4711" in layer
    assert pdf[0].get_textpage().get_text_range().split() == (
        ["A", "typed", "letter", "with", "its", "own", "text", "layer."]
    )
    pdf.close()
    for index in (0, 1):
        assert np.array_equal(rendered(out, index, 1.0), rendered(mixed, index, 1.0))
    assert_valid_pdf(out)


def scan_pdf(path: Path, pages: int) -> Path:
    first = render_lines([f"Scanned page 1 of {pages}"], width=420, height=300)
    rest = [
        render_lines([f"Scanned page {n} of {pages}"], width=420, height=300)
        for n in range(2, pages + 1)
    ]
    first.save(path, "PDF", resolution=72, save_all=True, append_images=rest)
    return path


def test_a_50_page_scan_streams_in_bounded_memory(tmp_path: Path) -> None:
    env = {"DESKLENS_DATA_DIR": str(tmp_path / "data")}
    peaks = {}
    for pages in (5, 50):
        scan = scan_pdf(tmp_path / f"scan{pages}.pdf", pages)
        out = tmp_path / f"out{pages}"
        run = run_limited("ocr", str(scan), "--format", "pdf", "--out", str(out), env=env)
        assert run.returncode == 0, run.stderr
        peaks[pages] = run.peak_rss_mb
        pdf = pdfium.PdfDocument(str(out / f"scan{pages}.pdf"))
        assert len(pdf) == pages
        assert f"page {pages} of {pages}" in pdf[pages - 1].get_textpage().get_text_range()
        pdf.close()
    assert peaks[50] - peaks[5] < 40, peaks  # ten times the pages, not ten times the memory


def test_a_ruled_tables_cells_are_set_on_their_glyphs(engine: OcrEngine, tmp_path: Path) -> None:
    path, out = tmp_path / "stock.png", tmp_path / "stock.pdf"
    ruled_table(TABLE).save(path)
    write_searchable(engine, path, out)
    face, draw = font("sans", 18), ImageDraw.Draw(Image.new("RGB", (1, 1)))
    drawn = []
    for number, row in enumerate(TABLE):  # as ruled_table draws them: 10 px into each cell
        x = 30
        for cell, width in zip(row, [200, 120, 140], strict=True):
            drawn.append((cell, draw.textbbox((x + 10, 30 + number * 40 + 9), cell, font=face)))
            x += width
    pdf = pdfium.PdfDocument(str(out))
    page = pdf[0]
    height = page.get_height()
    layer = layer_words(page)
    assert [word for word, _ in layer] == [cell for row in TABLE for cell in row]
    for (cell, (left, top, right, bottom)), (_, box) in zip(drawn, layer, strict=True):
        expected = [v * POINTS_PER_PIXEL for v in (left, right)]
        assert abs(box[0] - expected[0]) <= WORD_TOLERANCE_PT, (cell, box, expected)
        assert abs(box[2] - expected[1]) <= WORD_TOLERANCE_PT, (cell, box, expected)
        middle = height - (box[1] + box[3]) / 2 / 1  # points from the top
        assert top * POINTS_PER_PIXEL - 2 <= middle <= bottom * POINTS_PER_PIXEL + 2
    pdf.close()


def test_a_rotated_scanned_page_gets_its_text_where_it_is_shown(
    engine: OcrEngine, tmp_path: Path
) -> None:
    scan, turned, out = tmp_path / "scan.pdf", tmp_path / "turned.pdf", tmp_path / "out.pdf"
    # Drawn sideways, shown upright by the page's /Rotate: the OCR reads the upright page.
    upright = render_lines(WORDS_LINES, width=760)
    upright.rotate(90, expand=True).save(scan, "PDF", resolution=96)
    writer = PdfWriter(clone_from=scan)
    writer.pages[0].rotate(90)
    writer.write(turned)
    document = write_searchable(engine, turned, out).document
    assert document.text().startswith("Invoice 4711")
    pdf = pdfium.PdfDocument(str(out))
    page = pdf[0]
    assert page.get_textpage().get_text_range().split() == document.text().split()
    # "Invoice", mapped onto the page as shown, is where it is drawn on the upright image.
    word, (left, bottom, right, top) = layer_words(page)[0]
    width, height = upright.size
    corners = [_to_device(page, width, height, x, y) for x, y in ((left, top), (right, bottom))]
    xs, ys = [x for x, _ in corners], [y for _, y in corners]
    face = font("sans", 18)
    drawn = ImageDraw.Draw(upright).textbbox((24, 20), "Invoice", font=face)
    assert word == "Invoice"
    assert abs(min(xs) - drawn[0]) <= 6 and abs(max(xs) - drawn[2]) <= 6, (xs, drawn)
    assert min(ys) - 6 <= (drawn[1] + drawn[3]) / 2 <= max(ys) + 6, (ys, drawn)
    pdf.close()
    assert_valid_pdf(out)


def _to_device(page: pdfium.PdfPage, width: int, height: int, x: float, y: float):
    device_x, device_y = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(
        page.raw, 0, 0, width, height, 0, x, y, ctypes.byref(device_x), ctypes.byref(device_y)
    )
    return device_x.value, device_y.value


def test_an_encrypted_pdf_is_refused_with_a_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scan, locked, out = tmp_path / "scan.pdf", tmp_path / "locked.pdf", tmp_path / "out"
    render_lines(["Confidential"]).save(scan, "PDF", resolution=96)
    writer = PdfWriter(clone_from=scan)
    writer.encrypt(user_password="", owner_password="owner")  # opens without a password
    writer.write(locked)
    assert main(["ocr", str(locked), "--format", "pdf", "--out", str(out)]) == 4
    assert '"locked.pdf" is encrypted: DeskLens cannot add a text layer' in capsys.readouterr().err
    assert not (out / "locked.pdf").exists()
