"""Who may import whom, beyond the absence of circles (tests/core/test_structure.py): code that
the light paths run must not drag the heavy stacks in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("cv2", "openvino", "desktop.core.ocr.engine", "desktop.core.ocr.ppocr")


def _modules_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    return set(json.loads(completed.stdout.splitlines()[-1]))


def test_rasterising_a_pdf_loads_no_ocr_engine(tmp_path: Path) -> None:
    document = pdfium.PdfDocument.new()
    document.new_page(300, 200)
    document.save(tmp_path / "one.pdf")
    document.close()
    loaded = _modules_after(
        "from desktop.core.ocr.pdf import render_pages\n"
        f"images, total = render_pages({str(tmp_path / 'one.pdf')!r})\n"
        "assert total == 1 and images[0].size == (600, 400)"
    )
    assert not loaded & set(HEAVY)


def test_the_self_test_and_the_core_do_not_import_the_cli() -> None:
    loaded = _modules_after("import desktop.selftest, desktop.core.exit_codes")
    assert not {name for name in loaded if name.startswith("desktop.cli")}


def test_the_ocr_client_and_its_json_reader_stay_light() -> None:
    loaded = _modules_after("import desktop.cli.ocr_cmd, desktop.core.bounded_json")
    assert not loaded & {*HEAVY, "numpy", "PIL"}
