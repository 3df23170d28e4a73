"""QR codes and barcodes in a page, decoded with OpenCV's detectors, as part of every OCR result.

A page almost never has a code, so the search must cost little when there is none
(bench/codes_bench.py): OpenCV's QR detector runs only where three QR finder patterns
(squares nested three deep) are seen, and only what the detectors find is decoded. Both look
at the full page: at half size they miss a screen's QR codes (modules of 2-4 px) and EAN-13s.
OpenCV decodes EAN/UPC; Code 128 is read by `code128.py`. The rendering side (`OcrCode`,
`codes_block`) needs only the standard library: the `desklens ocr` client prints without
OpenCV.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from desktop.core.ocr.code128 import read_code128

if TYPE_CHECKING:
    import numpy as np

Box = tuple[int, int, int, int]

# OpenCV's barcode type names -> what the output calls them.
_KIND_NAMES = {
    "EAN_13": "EAN-13",
    "EAN_8": "EAN-8",
    "UPC_A": "UPC-A",
    "UPC_E": "UPC-E",
}
# OpenCV's barcode detector sizes its search windows by the page's size and misses the bars
# of a small page (a captured region): such a page is searched padded to this size, which
# leaves the pixels and their coordinates as they are.
MIN_SEARCH_SIZE = (1200, 760)
FINDER_PATTERNS = 3  # a QR code's corners
_LINK = re.compile(r"^(https?://|mailto:)\S+$", re.IGNORECASE)


@dataclass(frozen=True)
class OcrCode:
    """One decoded QR code or barcode."""

    kind: str  # "QR", "EAN-13", "Code 128", ...
    text: str
    box: Box  # left, top, right, bottom in image pixels

    @property
    def is_link(self) -> bool:
        return bool(_LINK.match(self.text))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "box": list(self.box)}


def codes_block(codes: list[OcrCode], *, markdown: bool) -> str:
    """One "KIND: text" line per code (links as Markdown autolinks), "" when there are none."""
    lines = []
    for code in codes:
        text = f"<{code.text}>" if markdown and code.is_link else code.text
        lines.append(f"{code.kind}: {text}")
    return "\n".join(lines)


def with_codes(text: str, codes: list[OcrCode], *, markdown: bool) -> str:
    """The page's text with its codes' block after it (a blank line between)."""
    block = codes_block(codes, markdown=markdown)
    return "\n\n".join(part for part in (text, block) if part)


class CodeReader:
    """Finds and decodes the codes of a grey page. The detectors are built on first use and
    kept (building them costs more than a search); calls are serialised."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._qr: Any = None
        self._barcode: Any = None

    def read(self, gray: np.ndarray) -> list[OcrCode]:
        import cv2

        with self._lock:
            if self._qr is None:
                self._qr, self._barcode = cv2.QRCodeDetector(), cv2.barcode.BarcodeDetector()
            page = _padded(gray)
            qr = self._qr_codes(page) if finder_patterns(gray) >= FINDER_PATTERNS else []
            codes = qr + self._barcodes(page)
        height, width = gray.shape[:2]
        inside = [replace(code, box=_clipped(code.box, width, height)) for code in codes]
        return sorted(inside, key=lambda code: (code.box[1], code.box[0]))

    def _qr_codes(self, gray: np.ndarray) -> list[OcrCode]:
        found, points = self._qr.detectMulti(gray)
        if not found:
            return []
        decoded, texts, _ = self._qr.decodeMulti(gray, points)
        if not decoded:
            return []
        return [
            OcrCode("QR", text, _box(quad))
            for text, quad in zip(texts, points, strict=True)
            if text
        ]

    def _barcodes(self, gray: np.ndarray) -> list[OcrCode]:
        import numpy as np

        found, points = self._barcode.detect(gray)
        if not found:
            return []
        codes = []
        for box in merge_side_by_side([_box(quad) for quad in points]):
            code128 = read_code128(gray, box)  # first: OpenCV may misread one as a UPC-A
            if code128 is not None:
                codes.append(OcrCode("Code 128", code128, box))
                continue
            left, top, right, bottom = box
            quad = np.array([[[left, bottom], [left, top], [right, top], [right, bottom]]])
            _, texts, kinds = self._barcode.decodeWithType(gray, quad.astype("float32"))
            if texts and texts[0]:
                codes.append(OcrCode(_KIND_NAMES.get(kinds[0], kinds[0]), texts[0], box))
        return codes


def finder_patterns(gray: np.ndarray) -> int:
    """How many QR finder patterns the page may have: dark squares holding a light ring
    holding a dark square (contours nested three deep, the inner about 3/7 of the outer).
    Text almost never nests so; a checkbox with a mark may, which costs only time."""
    import cv2
    import numpy as np

    _, dark = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    contours, hierarchy = cv2.findContours(dark, cv2.RETR_TREE, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return 0
    child = hierarchy[0][:, 2]
    outer = np.flatnonzero(child >= 0)
    outer = outer[child[child[outer]] >= 0]  # a child that has a child
    found = 0
    for index in outer:
        _, _, width, height = cv2.boundingRect(contours[index])
        _, _, inner, _ = cv2.boundingRect(contours[child[child[index]]])
        if width >= 7 and 0.75 < width / height < 1.33 and 0.2 < inner / width < 0.65:
            found += 1
    return found


def _padded(gray: np.ndarray) -> np.ndarray:
    import cv2

    height, width = gray.shape[:2]
    right, bottom = max(0, MIN_SEARCH_SIZE[0] - width), max(0, MIN_SEARCH_SIZE[1] - height)
    if not (right or bottom):
        return gray
    background = int(gray[-1, -1])  # a corner: the page's background, most likely
    return cv2.copyMakeBorder(gray, 0, bottom, 0, right, cv2.BORDER_CONSTANT, value=background)


def _clipped(box: Box, width: int, height: int) -> Box:
    left, top, right, bottom = box
    return max(0, left), max(0, top), min(width, right), min(height, bottom)


def _box(quad: np.ndarray) -> Box:
    xs, ys = quad[:, 0], quad[:, 1]
    return (
        round(float(xs.min())),
        round(float(ys.min())),
        round(float(xs.max())),
        round(float(ys.max())),
    )


def merge_side_by_side(boxes: list[Box]) -> list[Box]:
    """Boxes on one band that touch or overlap, joined: the detector may box an EAN-13's
    halves (either side of its centre guard) apart, and neither half decodes alone."""
    merged: list[Box] = []
    for box in sorted(boxes):
        last = merged[-1] if merged else None
        if last is not None and _same_band(last, box) and box[0] <= last[2] + _height(box) // 2:
            merged[-1] = (last[0], min(last[1], box[1]), max(last[2], box[2]), max(last[3], box[3]))
        else:
            merged.append(box)
    return merged


def _height(box: Box) -> int:
    return box[3] - box[1]


def _same_band(a: Box, b: Box) -> bool:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap > min(_height(a), _height(b)) // 2


_shared = CodeReader()


def find_codes(gray: np.ndarray) -> list[OcrCode]:
    """The QR codes and barcodes of a grey page (uint8, H x W), top to bottom."""
    return _shared.read(gray)
