"""QR codes and barcodes in a page, read with zxing-cpp, as part of every OCR result.

One maintained reader for every format a screenshot shows (`FORMATS`): QR, Micro QR, rMQR,
Aztec, Data Matrix, PDF417, Code 128/39/93, Codabar, EAN-8/13, UPC-A/E, ITF and DataBar
(MaxiCode is left out: zxing-cpp reads it only in an image that holds nothing else).

A page almost never has a code, so the search must cost little when there is none
(bench/codes_bench.py): it looks at the page at its own size only (screens draw codes with
whole-pixel modules; the downscaled passes are for blurry photos), turned 90° for the bars of
a rotated barcode, and, on a dark page only, inverted for the matrix codes (a dark theme may
draw a QR code's modules light; zxing-cpp inverts for its matrix readers). Light bars on a
dark page are not read: apps draw barcodes dark on a light label, and a second, inverted
pass for them made the search on dark pages a quarter dearer than the OpenCV search it
replaced.

The rendering side (`OcrCode`, `codes_block`) needs only the standard library: the
`desklens ocr` client prints without the reader. Structured payloads (Wi-Fi, contacts,
payments, GS1) are spelled out beside the raw text (`code_payloads.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from desktop.core.ocr.code_payloads import Payload, parse_payload
from desktop.core.terminal_text import terminal_text

if TYPE_CHECKING:
    import numpy as np
    import zxingcpp

Box = tuple[int, int, int, int]
Point = tuple[int, int]

# zxing-cpp's format families DeskLens reads (each takes in its variants: Micro QR and rMQR
# with QR, ISBN with EAN/UPC, ...). Not Telepen or DX film edge: nobody screenshots them and
# their loose patterns would only add false codes on text.
FORMATS = ("QRCode", "Aztec", "DataMatrix", "PDF417", "Code128", "Code39", "Code93", "Codabar",
           "EANUPC", "ITF", "DataBar")  # fmt: skip
# zxing-cpp's format names -> the shorter ones the "KIND: text" lines have always used.
_KIND_NAMES = {"QR Code": "QR", "QR Code Model 1": "QR", "QR Code Model 2": "QR",
               "Micro QR Code": "Micro QR", "rMQR Code": "rMQR"}  # fmt: skip
# The labels of the "KIND: text" lines (the GUI's code links look for them).
KINDS = ("QR", "Micro QR", "rMQR", "Aztec", "Data Matrix", "PDF417", "Code 128", "Code 39",
         "Code 93", "Codabar", "EAN-13", "EAN-8", "UPC-A", "UPC-E", "ITF", "DataBar")  # fmt: skip
DARK_PAGE = 128  # a page whose median grey is below this is searched inverted too
_LINK = re.compile(r"^(https?://|mailto:)\S+$", re.IGNORECASE)


@dataclass(frozen=True)
class OcrCode:
    """One decoded QR code or barcode."""

    kind: str  # "QR", "EAN-13", "Code 128", "Data Matrix", ...: the line's label
    text: str  # the content as decoded; GS1 data in its "(01)..." form
    box: Box  # left, top, right, bottom in image pixels
    format: str = ""  # zxing-cpp's name of the symbology: "QR Code", "DataBar Expanded", ...
    # The corners in the code's own orientation (top-left, top-right, bottom-right,
    # bottom-left): a code read turned shows which way it is turned.
    position: tuple[Point, ...] = ()
    payload: Payload | None = None  # a structured payload spelled out, None for plain text

    @property
    def is_link(self) -> bool:
        return bool(_LINK.match(self.text))

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "text": self.text,
            "box": list(self.box),
            "format": self.format or self.kind,
            "position": [list(point) for point in self.position],
            "payload": self.payload.to_dict() if self.payload else None,
        }


def codes_block(codes: list[OcrCode], *, markdown: bool) -> str:
    """One "KIND: text" line per code (links as Markdown autolinks), a structured payload's
    fields under it ("  Network: Home"; a list in Markdown); "" when there are none. A code
    holds whatever its maker put in: control and bidi characters are shown as escapes
    (`invoice\\u202efdp.exe`, never "invoiceexe.pdf"); the JSON keeps the text as decoded."""
    lines = []
    for code in codes:
        shown = terminal_text(code.text, lines=False)
        text = f"<{shown}>" if markdown and code.is_link else shown
        lines.append(f"{code.kind}: {text}")
        if code.payload is None:
            continue
        bullet = "- " if markdown else "  "
        lines += [
            f"{bullet}{name}: {_field(value, markdown)}" for name, value in code.payload.fields
        ]
        if markdown:
            lines.append("")  # ends the list: the next code's line would continue its last item
    return "\n".join(lines).strip("\n")


def _field(value: str, markdown: bool) -> str:
    """A field's value on its line (a vCard note or address may hold line breaks)."""
    if markdown and _LINK.match(value):
        return f"<{terminal_text(value, lines=False)}>"
    return terminal_text(value.replace("\r\n", "\n").replace("\n", " / "), lines=False)


def with_codes(text: str, codes: list[OcrCode], *, markdown: bool) -> str:
    """The page's text with its codes' block after it (a blank line between)."""
    block = codes_block(codes, markdown=markdown)
    return "\n\n".join(part for part in (text, block) if part)


def find_codes(gray: np.ndarray) -> list[OcrCode]:
    """The QR codes and barcodes of a grey page (uint8, H x W), top to bottom.

    zxing-cpp refuses an image longer than 65,535 px on a side (a scrolling capture, a strip):
    such a page is searched in overlapping pieces along its long side, each within the limit;
    a code read in two pieces' overlap is kept once."""
    import numpy as np

    if gray.size == 0:
        return []
    sample = gray[:: max(1, gray.shape[0] // 64), :: max(1, gray.shape[1] // 64)]
    dark = float(np.median(sample)) < DARK_PAGE
    height, width = gray.shape[:2]
    codes: set[OcrCode] = set()
    for top, left in _pieces(height, width):
        piece = gray[top : top + MAX_SEARCH_SIDE, left : left + MAX_SEARCH_SIDE]
        for code in _search(piece, dark):
            codes.add(_moved(code, left, top, width, height))
    return sorted(_distinct(codes), key=lambda code: (code.box[1], code.box[0], code.text))


# zxing-cpp's own limit on either side; longer pages are searched in pieces that overlap by
# PIECE_OVERLAP px (more than any code a screen draws is long), so a code cut by one piece's
# edge is whole in the next.
MAX_SEARCH_SIDE = 65_535
PIECE_OVERLAP = 4_096


def _pieces(height: int, width: int) -> list[tuple[int, int]]:
    """The (top, left) corners of the pieces to search: one for any page within the limit."""

    def starts(length: int) -> list[int]:
        if length <= MAX_SEARCH_SIDE:
            return [0]
        step = MAX_SEARCH_SIDE - PIECE_OVERLAP
        count = -(-(length - PIECE_OVERLAP) // step)
        return [min(i * step, length - MAX_SEARCH_SIDE) for i in range(count)]

    return [(top, left) for top in starts(height) for left in starts(width)]


def _search(gray: np.ndarray, dark: bool) -> list[OcrCode]:
    import zxingcpp

    found = zxingcpp.read_barcodes(
        gray,
        # A sequence, as zxing-cpp 3 asks (`|` is deprecated); its stubs still want the set.
        formats=[getattr(zxingcpp.BarcodeFormat, name) for name in FORMATS],  # type: ignore[arg-type]
        try_rotate=True,
        try_downscale=False,
        try_invert=dark,
        text_mode=zxingcpp.TextMode.HRI,
    )
    height, width = gray.shape[:2]
    return [_code(barcode, width, height) for barcode in found if barcode.valid]


def _moved(code: OcrCode, dx: int, dy: int, width: int, height: int) -> OcrCode:
    """A code found in a piece, in the whole page's pixels."""
    if not (dx or dy):
        return code
    left, top, right, bottom = code.box
    box = (left + dx, top + dy, min(right + dx, width), min(bottom + dy, height))
    position = tuple((x + dx, y + dy) for x, y in code.position)
    return replace(code, box=box, position=position)


def _distinct(codes: set[OcrCode]) -> list[OcrCode]:
    """One of each code read twice in two pieces' overlap (same kind and text, boxes meet)."""
    kept: list[OcrCode] = []
    for code in sorted(codes, key=lambda code: code.box):
        if not any(_same(code, other) for other in kept):
            kept.append(code)
    return kept


def _same(one: OcrCode, other: OcrCode) -> bool:
    a, b = one.box, other.box
    meet = a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]
    return meet and (one.kind, one.text) == (other.kind, other.text)


def _code(barcode: zxingcpp.Barcode, width: int, height: int) -> OcrCode:
    import zxingcpp

    position = barcode.position
    corners = tuple(
        (min(max(point.x, 0), width), min(max(point.y, 0), height))
        for point in (position.top_left, position.top_right, position.bottom_right,
                      position.bottom_left)
    )  # fmt: skip
    xs, ys = [x for x, _ in corners], [y for _, y in corners]
    format_name = str(barcode.format)
    extra = barcode.extra if isinstance(barcode.extra, dict) else {}
    kind, text = _kind_and_text(format_name, barcode.text, extra)
    gs1 = barcode.content_type == zxingcpp.ContentType.GS1
    payload = parse_payload(barcode.bytes.decode("latin-1") if gs1 else text, gs1=gs1)
    box = (min(xs), min(ys), max(xs), max(ys))
    return OcrCode(kind, text, box, format_name, corners, payload)


def _kind_and_text(format_name: str, text: str, extra: dict[str, Any]) -> tuple[str, str]:
    """zxing-cpp writes every EAN/UPC as its 13 digits: a UPC-A is the EAN-13 with a leading
    0 and is printed with 12 digits; a UPC-E as its 8 (its `extra`)."""
    if format_name in ("EAN-13", "UPC-A") and len(text) == 13 and text.startswith("0"):
        return "UPC-A", text[1:]
    if format_name == "UPC-E":
        return "UPC-E", str(extra.get("UPCE", text))
    if format_name.startswith("DataBar"):
        return "DataBar", text
    return _KIND_NAMES.get(format_name, format_name), text
