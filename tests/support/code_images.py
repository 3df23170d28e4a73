"""QR codes and barcodes drawn into screenshot-like pages with text around them. The `qrcode`
and `python-barcode` test dependencies draw what they can (encoders independent of the
reader); zxing-cpp's writer draws the rest (Micro QR, rMQR, Aztec, Data Matrix, PDF417,
MaxiCode, Code 93, UPC-E, DataBar). The reader must read them back exactly."""

from __future__ import annotations

import barcode
import numpy as np
import qrcode
import zxingcpp
from barcode.writer import ImageWriter
from PIL import Image, ImageDraw, ImageOps

from desktop.core.ocr.rendered_pages import font

URL = "https://example.org/docs?page=2&lang=en"
UNICODE = "Grüße aus Köln — 東京 ✓"
EAN13 = "4006381333931"  # 12 digits + the check digit python-barcode computes
CODE128 = "DeskLens-2026/x"

# Real-shaped structured payloads.
WIFI = r"WIFI:T:WPA;S:Cafe Guest\;5G;P:pa\;ss\:w0rd\\x;H:true;;"
VCARD = (
    "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Muster;Anna;;Dr.;\r\nFN:Dr. Anna Muster\r\n"
    "ORG:Example AG;Research\r\nTITLE:Head of Imaging\r\nTEL;TYPE=WORK,VOICE:+41 44 668 18 00\r\n"
    "TEL;TYPE=CELL:+41 79 555 01 23\r\nEMAIL;TYPE=INTERNET:anna.muster@example.ch\r\n"
    "ADR;TYPE=WORK:;;Bahnhofstrasse 1;Zürich;;8001;Switzerland\r\nURL:https://example.ch\r\n"
    "NOTE:Office hours 9-17\\, Mon-Fri\r\nEND:VCARD\r\n"
)
MECARD = "MECARD:N:Muster,Anna;TEL:+41446681800;EMAIL:anna@example.ch;ADR:Zürich\\, CH;;"
# EPC069-12 v2 "GiroCode" (the example of the EPC's guidelines: a donation to the Red Cross).
EPC = (
    "BCD\n002\n1\nSCT\nBPOTBEB1\nRed Cross of Belgium\nBE72000000001616\nEUR1\nCHAR\n\n"
    "Urgency fund\nSample EPC QR code"
)
# Swiss QR-bill, SPC 0200 (the shape of SIX's example: QR-IBAN with a QR reference).
SWISS = "\n".join(
    [
        "SPC", "0200", "1", "CH4431999123000889012",
        "S", "Robert Schneider AG", "Rue du Lac", "1268", "2501", "Biel", "CH",
        "", "", "", "", "", "", "",
        "1949.75", "CHF",
        "S", "Pia-Maria Rutschmann-Schnyder", "Grosse Marktgasse", "28", "9400", "Rorschach", "CH",
        "QRR", "210000000003139471430009017", "Order of 15 June 2020", "EPD",
        "//S1/10/10201409/11/200701/20/140.000-53/30/102673831/31/200615/32/7.7/33/7.7:139.40",
    ]
)  # fmt: skip
GS1_ELEMENTS = "[01]04012345678901[17]271231[10]ABC12[21]SN-0042"  # zxing-cpp's writer syntax
GS1_TEXT = "(01)04012345678901(17)271231(10)ABC12(21)SN-0042"  # as the reader gives it


def qr_image(text: str, module: int = 4) -> Image.Image:
    code = qrcode.QRCode(box_size=module, border=4)
    code.add_data(text)
    return code.make_image().get_image().convert("RGB")


def barcode_image(kind: str, text: str, **extra: object) -> Image.Image:
    """Bars of whole pixels (0.254 mm at 200 dpi = 2 px), as a screen would show them."""
    options = {"module_width": 0.254, "module_height": 8, "quiet_zone": 4, "font_size": 8,
               "dpi": 200}  # fmt: skip
    made = barcode.get(kind, text, writer=ImageWriter(), options=extra or None)
    return made.render(options).convert("RGB")


def zxing_image(format_name: str, text: str, module: int = 2, **options: object) -> Image.Image:
    """zxing-cpp's writer: `module` px a module, its quiet zones included."""
    made = zxingcpp.create_barcode(text, getattr(zxingcpp.BarcodeFormat, format_name), **options)
    pixels = np.asarray(made.to_image(scale=module))
    return Image.fromarray(pixels).convert("RGB")


def screenshot(code: Image.Image, *, dark: bool = False, invert: bool = False, rotate: int = 0,
               size: tuple[int, int] = (960, 620)) -> Image.Image:  # fmt: skip
    """A screen-like page: a title, a paragraph, the code (turned `rotate` degrees), a footer.
    `dark`: light text on a dark page (the code on its own light quiet zone, as apps draw
    it); `invert`: the code's modules light on dark, as a dark theme may draw a QR code."""
    background, ink = ("#1e1f22", "#dcdde0") if dark else ("white", "black")
    if invert:
        code = ImageOps.invert(code)
    code = code.rotate(rotate, expand=True, fillcolor=background) if rotate else code
    size = (max(size[0], code.width + 80), max(size[1], code.height + 230))
    page = Image.new("RGB", size, background)
    draw = ImageDraw.Draw(page)
    draw.text((32, 24), "Your ticket is ready", font=font("sans", 26), fill=ink)
    for row, line in enumerate(("Show this code at the gate or scan it with your phone.",
                                "Valid for one journey on the date printed below.")):  # fmt: skip
        draw.text((32, 70 + 30 * row), line, font=font("sans", 18), fill=ink)
    page.paste(code, (40, 150))
    draw.text((32, size[1] - 44), "Questions? Call us on weekdays.", font=font("sans", 18),
              fill=ink)  # fmt: skip
    return page


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


def page_with_payloads() -> Image.Image:
    """A 1280x800 page: a Wi-Fi QR, a GS1 Data Matrix, an Aztec boarding pass, a PDF417."""
    page = Image.new("RGB", (1280, 800), "white")
    draw = ImageDraw.Draw(page)
    draw.text((40, 24), "Guest network and your parcel", font=font("sans", 26), fill="black")
    page.paste(qr_image(WIFI, module=3), (40, 90))
    page.paste(zxing_image("DataMatrix", GS1_ELEMENTS, module=4, gs1=True), (420, 100))
    page.paste(zxing_image("Aztec", "M1MUSTER/ANNA EABC123 ZRHLHRLX 0318", module=3), (760, 100))
    page.paste(zxing_image("PDF417", "TICKET 4711 ZURICH HB-BERN", module=2), (40, 520))
    draw.text((40, 740), "Keep this page until delivery.", font=font("sans", 22), fill="black")
    return page


def page_without_codes() -> Image.Image:
    page = Image.new("RGB", (1000, 400), "white")
    draw = ImageDraw.Draw(page)
    for row, line in enumerate(("Invoice 2041", "Total due: 118.40 EUR", "Paid by card")):
        draw.text((40, 40 + 60 * row), line, font=font("sans", 26), fill="black")
    draw.rectangle((600, 60, 900, 300), outline="black", width=3)  # a box is not a code
    return page
