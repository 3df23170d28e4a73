"""QR codes and barcodes drawn into screenshot-like pages with text around them (the `qrcode`
and `python-barcode` test dependencies make them; OpenCV must read them back exactly)."""

from __future__ import annotations

import barcode
import qrcode
from barcode.writer import ImageWriter
from PIL import Image, ImageDraw

from desktop.core.ocr.rendered_pages import font

URL = "https://example.org/docs?page=2&lang=en"
UNICODE = "Grüße aus Köln — 東京 ✓"
EAN13 = "4006381333931"  # 12 digits + the check digit python-barcode computes
CODE128 = "DeskLens-2026/x"


def qr_image(text: str, module: int = 4) -> Image.Image:
    code = qrcode.QRCode(box_size=module, border=4)
    code.add_data(text)
    return code.make_image().get_image().convert("RGB")


def barcode_image(kind: str, text: str) -> Image.Image:
    """Bars of whole pixels (0.254 mm at 200 dpi = 2 px), as a screen would show them."""
    options = {"module_width": 0.254, "module_height": 8, "quiet_zone": 4, "font_size": 8,
               "dpi": 200}  # fmt: skip
    return barcode.get(kind, text, writer=ImageWriter()).render(options).convert("RGB")


def page_with_codes(heading: str = "Scan to open the order page") -> Image.Image:
    """A 1200x760 page: a heading line, two QR codes, an EAN-13, a Code 128, a footer line."""
    page = Image.new("RGB", (1200, 760), "white")
    draw = ImageDraw.Draw(page)
    draw.text((40, 30), heading, font=font("sans", 24), fill="black")
    page.paste(qr_image(URL), (40, 100))
    page.paste(qr_image(UNICODE), (360, 100))
    page.paste(barcode_image("ean13", EAN13[:12]), (720, 110))
    page.paste(barcode_image("code128", CODE128), (720, 420))
    draw.text((40, 690), "Questions? Call us on weekdays.", font=font("sans", 22), fill="black")
    return page


def page_without_codes() -> Image.Image:
    page = Image.new("RGB", (1000, 400), "white")
    draw = ImageDraw.Draw(page)
    for row, line in enumerate(("Invoice 2041", "Total due: 118.40 EUR", "Paid by card")):
        draw.text((40, 40 + 60 * row), line, font=font("sans", 26), fill="black")
    draw.rectangle((600, 60, 900, 300), outline="black", width=3)  # a box is not a code
    return page
