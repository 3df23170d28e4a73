"""`desklens redact` on PDFs whose text layer or page box is unusual (issue 59): a page box
that does not start at 0,0, a run in a 0.1-pt font, a run placed below the page."""

from __future__ import annotations

from pathlib import Path

import pypdfium2 as pdfium
import pytest
from ocr_pages import one_page_pdf

from desktop.cli import main
from desktop.core.ocr import OcrEngine

BODY = "BT /F1 14 Tf {x} {y} Td 20 TL (Invoice for March services) ' " \
       "(Contact: billing.team@example.org) ' (Thank you for your business) ' ET"  # fmt: skip


def _read_back(path: Path) -> str:
    document = pdfium.PdfDocument(str(path))
    try:
        images = [page.render(scale=2).to_pil().convert("RGB") for page in document]
    finally:
        document.close()
    engine = OcrEngine()
    return " ".join(engine.extract(image).text() for image in images)


@pytest.mark.parametrize(
    ("box", "extra", "x", "y"),
    [
        ("[100 200 712 992]", "", 172, 940),  # a MediaBox away from 0,0
        ("[0 0 612 792]", "/CropBox [100 100 600 780]", 172, 740),  # pdfcrop's CropBox
        ("[-50 -80 562 712]", "", 22, 660),  # negative origin
    ],
)
def test_a_page_box_away_from_the_origin_is_filled_where_the_item_is(
    tmp_path, data_dir, capsys, box, extra, x, y
):
    path = tmp_path / "cropped.pdf"
    path.write_bytes(one_page_pdf(BODY.format(x=x, y=y), box, extra))
    assert main(["redact", str(path)]) == 0
    assert capsys.readouterr().out.startswith("Redacted 1 item (1 e-mail) on 1 of 1 page")
    read = _read_back(tmp_path / "cropped.redacted.pdf")
    assert "billing" not in read and "example" not in read
    assert "Invoice for March services" in read and "Thank you for your business" in read


def test_a_run_in_a_tenth_of_a_point_or_below_the_page_is_no_traceback(tmp_path, data_dir, capsys):
    tiny = BODY.format(x=72, y=740) + " BT /F1 0.1 Tf 72 600 Td (Mail jo@example.org now) Tj ET"
    below = BODY.format(x=72, y=740) + " BT /F1 14 Tf 72 -50 Td (Mail tom@example.org) Tj ET"
    for name, stream in (("tiny", tiny), ("below", below)):
        path = tmp_path / f"{name}.pdf"
        path.write_bytes(one_page_pdf(stream))
        assert main(["redact", str(path), "--text"]) == 0
        said = capsys.readouterr()
        assert said.err.startswith("Redacted "), said.err
        assert "@" not in said.out  # the invisible run is tagged; the one off the page not kept
