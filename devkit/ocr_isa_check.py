"""The OCR's fixed check pages read by INT8 and FP32 in this process, as JSON on stdout.

    ONEDNN_MAX_CPU_ISA=AVX512_CORE python -m devkit.ocr_isa_check

Run once per instruction-set level in a child process (tests/ocr/test_int8_every_cpu.py,
devkit/isa_levels.py): OpenVINO reads the variable when it loads. Each page has the exact text
it must read; the pages are the kinds INT8 models lost on some CPUs: spaces between words
("Invoice4711", "byFriday"), a light-grey low-contrast page, small print, and a table of lone
characters (a "1" beside a "-" read "1." by the INT8 recognizer: `ocr/marks.py`).
"""

from __future__ import annotations

import json
import sys

from PIL import Image

from desktop.core.ocr import OcrEngine
from desktop.core.ocr.rendered_pages import render_lines
from devkit.table_pages import lone_characters_page

INVOICE = [
    "Invoice 4711 for the batch of April",
    "Total amount due 12,450.50 EUR by Friday",
    "Ship to: Mrs Jane Müller, 12 Long Road",
]
GREY = [
    "Backups run every night at 02:00",
    "The report is due on 14 March 2026",
    "Contact the support team for access",
]
SMALL = [
    "Order 5521 ships in 3 boxes to Berlin",
    "Warranty: 24 months from the date of purchase",
    "Version 2.4.1 fixes the export of large tables",
]


def pages() -> dict[str, tuple[Image.Image, list[str]]]:
    cells = lone_characters_page("serif", dark=False)
    return {
        "invoice": (render_lines(INVOICE, width=760), INVOICE),
        "light grey": (render_lines(GREY, width=760, ink=(175, 175, 175)), GREY),
        "small print": (render_lines(SMALL, size=12, width=600), SMALL),
        "lone characters": (cells.image, ["\t".join(row) for row in cells.tables[0].texts()]),
    }


def main() -> int:
    engines = {name: OcrEngine(precision=name) for name in ("int8", "fp32")}
    found: dict[str, dict[str, str]] = {}
    for name, (image, lines) in pages().items():
        found[name] = {"expected": "\n".join(lines)}
        for precision, engine in engines.items():
            found[name][precision] = engine.extract(image).text()
    loaded = {p: str(e.model_files.precision) for p, e in engines.items() if e.model_files}
    json.dump({"pages": found, "precisions": loaded}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
