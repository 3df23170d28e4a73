"""The OCR's fixed check pages read in this process, as JSON on stdout: by the INT8 models as
they are, by the FP32 models, and by the default engine (INT8 where this CPU's check found it
reads as FP32, `desktop/core/ocr/int8_check.py`).

    ONEDNN_MAX_CPU_ISA=AVX512_CORE python -m devkit.ocr_isa_check

Run once per instruction-set level in a child process (tests/ocr/test_int8_every_cpu.py,
devkit/isa_levels.py): OpenVINO reads the variable when it loads. The pages are the run-time
check's (`ocr/check_pages.py`: spaces between words, a light-grey page, small print, lone
characters in table cells, an invoice's items), the first three with the text they show, and
the lone-characters table of the table tests (`devkit/table_pages.py`), which the check never
reads: on it INT8 read a lone "-" as "." with AMX.
"""

from __future__ import annotations

import argparse
import json
import sys

import openvino as ov
from PIL import Image

from desktop.core.ocr import OcrEngine
from desktop.core.ocr.check_pages import check_pages
from devkit.table_pages import lone_characters_page

UNSEEN = "lone characters, table tests"  # not among the check's pages


def pages() -> dict[str, tuple[Image.Image, str | None]]:
    """Each page's image and the text it must read (None: only alike in FP32 and INT8)."""
    found: dict[str, tuple[Image.Image, str | None]] = {
        page.name: (page.image, "\n".join(page.lines) if page.lines else None)
        for page in check_pages()
    }
    cells = lone_characters_page("serif", dark=False)
    found[UNSEEN] = (cells.image, "\n".join("\t".join(row) for row in cells.tables[0].texts()))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", help="comma-separated page names (default: every page)")
    chosen = parser.parse_args(argv).pages
    engines = {name: OcrEngine(precision=name) for name in ("fp32", "int8", "auto")}
    read: dict[str, dict[str, str | None]] = {}
    for name, (image, expected) in pages().items():
        if chosen and name not in chosen.split(","):
            continue
        read[name] = {"expected": expected}
        for precision, engine in engines.items():
            read[name][precision] = engine.extract(image).text()
    loaded = {p: str(e.model_files.precision) for p, e in engines.items() if e.model_files}
    verdict = engines["auto"].int8_verdict
    assert verdict is not None, "the default engine checks INT8 when it loads it"
    checked = {"sentence": verdict.sentence(), "differed": list(verdict.differed)}
    device = ov.Core().get_property("CPU", "FULL_DEVICE_NAME")  # QEMU's says "(Haswell)"
    json.dump(
        {"pages": read, "precisions": loaded, "verdict": checked, "device": device}, sys.stdout
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
