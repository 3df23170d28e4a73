"""`desklens redact` on PDFs: each page filled and read back, a new PDF of the filled pages
(PDFium renders and extracts it, pypdf reads it strictly), nothing of the original's text."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from ocr_pages import text_layer_pdf
from PIL import Image
from pypdf import PdfReader, PdfWriter

from desktop.cli import main
from desktop.core.images import load_image
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.models import OcrLine, OcrResult
from desktop.core.ocr.searchable_pdf import image_pdf_bytes
from desktop.core.privacy.models import Span
from desktop.core.privacy.redact_pdf import PageRedaction, PdfRedaction, redact_pdf
from devkit import redaction_pages

TYPED = [
    "Invoice for March services",
    "Contact: billing.team@example.org",
    "Pay to IBAN DE89 3704 0044 0532 0130 00",
    "Thank you for your business",
]


def _image_page(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PDF", resolution=96)
    return buffer.getvalue()


def _statement(tmp_path: Path) -> tuple[Path, redaction_pages.RedactionPage]:
    """Four pages: typed text (a text layer), a scan, a scan under an innocent text layer
    (the items are in its pixels only), a blank page."""
    letter = redaction_pages.page(11)
    layer = OcrResult([OcrLine("Archived copy of the statement for the records", (40, 20, 600, 44),
                               1.0, 0)], *letter.image.size, 0.0)  # fmt: skip
    parts = [
        text_layer_pdf(TYPED),
        _image_page(letter.image),
        image_pdf_bytes(load_image(letter.image), layer),
        _image_page(Image.new("RGB", (600, 800), "white")),
    ]
    writer = PdfWriter()
    for part in parts:
        writer.append(PdfReader(io.BytesIO(part)))
    path = tmp_path / "statement.pdf"
    with path.open("wb") as file:
        writer.write(file)
    return path, letter


def test_a_pdf_is_redacted_page_by_page_into_a_new_pdf(tmp_path, data_dir, capsys):
    path, letter = _statement(tmp_path)
    assert main(["redact", str(path), "--json"]) == 0
    out = path.with_name("statement.redacted.pdf")
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["outcome"] == "redacted" and report["pages"] == 4
    assert {span["page"] for span in report["spans"]} == {1, 2, 3}
    assert captured.err.startswith("Redacted 10 items (") and "on 3 of 4 pages" in captured.err
    assert "No text could be read on page 4, so it was not checked" in captured.err

    assert len(PdfReader(out, strict=True).pages) == 4
    original, redacted = pdfium.PdfDocument(str(path)), pdfium.PdfDocument(str(out))
    try:
        for before, after in zip(original, redacted, strict=True):
            assert after.get_size() == pytest.approx(before.get_size(), abs=0.5)
        layers = [page.get_textpage().get_text_range() for page in redacted]
        renders = [page.render(scale=2).to_pil().convert("RGB") for page in redacted]
    finally:
        original.close()
        redacted.close()
    values = ["billing.team@example.org", "DE89 3704", *(v for _, v in letter.private)]
    searchable = " ".join(layers)
    assert "[email]" in layers[0] and "[iban]" in layers[0] and "Thank you" in layers[0]
    assert all(value not in searchable for value in values), searchable
    engine = OcrEngine()
    read = " ".join(engine.extract(image).text() for image in renders[:3])
    assert all(value not in read for value in values), read
    assert "Thank you" in read and "Account summary" in read


def test_each_page_is_told_as_it_is_done(tmp_path):
    writer = PdfWriter()
    for _ in range(2):
        writer.append(PdfReader(io.BytesIO(text_layer_pdf(TYPED))))
    path = tmp_path / "two.pdf"
    with path.open("wb") as file:
        writer.write(file)
    told: list[tuple[int, int]] = []
    redaction = redact_pdf(
        OcrEngine(), path, on_page=lambda done, total: told.append((done, total))
    )
    assert told == [(1, 2), (2, 2)]
    assert [page.number for page in redaction.pages] == [1, 2]
    assert [[span.kind for span in page.spans] for page in redaction.pages] == [
        ["email", "iban"],
        ["email", "iban"],
    ]


def test_a_pdf_goes_to_a_pdf_and_an_image_to_an_image(tmp_path, data_dir, capsys):
    pdf, image = tmp_path / "a.pdf", tmp_path / "b.png"
    pdf.write_bytes(text_layer_pdf(TYPED))
    Image.new("RGB", (100, 100), "white").save(image)
    assert main(["redact", str(pdf), "--out", str(tmp_path / "a.png")]) == 2
    assert "a PDF's redacted copy is a PDF" in capsys.readouterr().err
    assert main(["redact", str(image), "--out", str(tmp_path / "b.pdf")]) == 2
    assert "an image's is an image" in capsys.readouterr().err
    assert not (tmp_path / "a.png").exists() and not (tmp_path / "b.pdf").exists()


def test_a_damaged_pdf_is_named_and_nothing_is_written(tmp_path, data_dir, capsys):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\n" + b"\0" * 64)
    assert main(["redact", str(broken)]) == 4
    assert '"broken.pdf" could not be opened as a PDF' in capsys.readouterr().err
    assert not (tmp_path / "broken.redacted.pdf").exists()
    empty = tmp_path / "empty.pdf"
    with empty.open("wb") as file:
        PdfWriter().write(file)
    assert main(["redact", str(empty)]) == 4  # PDFium refuses it; it is not damaged
    assert '"empty.pdf" is a PDF without pages: there is nothing to read.' in (
        capsys.readouterr().err
    )
    locked = tmp_path / "locked.pdf"
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(text_layer_pdf(TYPED))))
    writer.encrypt("secret")
    with locked.open("wb") as file:
        writer.write(file)
    assert main(["redact", str(locked)]) == 4
    assert "password-protected" in capsys.readouterr().err
    assert not (tmp_path / "locked.redacted.pdf").exists()


def _page(number: int, spans: tuple[Span, ...] = (), leaks: tuple[Span, ...] = (), *,
          lines: int = 1) -> PageRedaction:  # fmt: skip
    result = OcrResult([OcrLine("x", (0, 0, 9, 9), 1.0, 0)] * lines, 10, 10, 0.0)
    outcome = "leaked" if leaks else "redacted" if spans else "clean" if lines else "unreadable"
    return PageRedaction(number, outcome, spans, leaks, result, 0)


def test_what_a_pdf_redaction_says():
    mail = Span("email", "jo@example.org", 0, 0, 14)
    leaked = PdfRedaction("s.pdf", (_page(1, (mail,)), _page(2, leaks=(mail,))), 5, b"")
    assert leaked.outcome == "leaked"
    assert leaked.summary() == (
        "Not redacted safely: the OCR still reads jo…rg (email) on the filled page 2; "
        "nothing was saved."
    )
    clean = PdfRedaction("s.pdf", (_page(1, lines=3), _page(2, lines=0)), 2, b"%PDF")
    assert clean.summary().startswith("Nothing to redact: the OCR read 3 lines on 2 pages")
    assert (
        clean.warning()
        == "No text could be read on page 2, so it was not checked (kept as rendered)."
    )
    blank = PdfRedaction("s.pdf", (_page(1, lines=0), _page(2, lines=0)), 2, b"%PDF")
    assert blank.outcome == "unreadable" and blank.warning() is None
    assert blank.summary().startswith("Could not read any text on the 2 pages of this PDF")
