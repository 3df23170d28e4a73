"""Pages the OCR tests of several layers read (tests/ocr, tests/gui, tests/cli): a ruled table
with known cells, drawn with the app's own page renderer's fonts; a PDF with a text layer."""

from __future__ import annotations

from PIL import Image, ImageDraw

from desktop.core.ocr.rendered_pages import font

TABLE = [
    ["Product", "Units", "Price"],
    ["Keyboard", "12", "49.90"],
    ["Monitor", "3", "219.00"],
    ["Cable", "40", "4.50"],
]


def ruled_table(rows: list[list[str]]) -> Image.Image:
    widths, height, face = [200, 120, 140], 40, font("sans", 18)
    image = Image.new("RGB", (sum(widths) + 60, height * len(rows) + 60), "white")
    draw = ImageDraw.Draw(image)
    top = left = 30
    for number, row in enumerate(rows):
        x = left
        for cell, width in zip(row, widths, strict=True):
            draw.text((x + 10, top + number * height + 9), cell, font=face, fill="black")
            x += width
    bottom, right = top + height * len(rows), left + sum(widths)
    for y in range(top, bottom + 1, height):
        draw.line([(left, y), (right, y)], fill="black", width=1)
    x = left
    for width in [0, *widths]:
        x += width
        draw.line([(x, top), (x, bottom)], fill="black", width=1)
    return image


def text_layer_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose text is real text (Helvetica), written by hand."""
    shown = " ".join(f"({line}) '" for line in lines)
    return one_page_pdf(f"BT /F1 14 Tf 72 740 Td 20 TL {shown} ET")


def one_page_pdf(stream: str, box: str = "[0 0 612 792]", extra: str = "") -> bytes:
    """A one-page PDF drawing `stream` in Helvetica (F1), its MediaBox `box` (and `extra` page
    keys, e.g. a CropBox), written by hand."""
    data = stream.encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox {box} {extra} ".encode()
        + b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(data), data),
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
