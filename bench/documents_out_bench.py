"""Documents out (issue 28): what a searchable PDF costs beside the OCR itself, and the peak
memory of `desklens ocr scan.pdf --format pdf` as the page count grows.

A scanned A4 document (150 dpi JPEG pages, the top half prose, no text layer) is made on
disk; then, in one run:

* time: `write_searchable` over the scan in this process; per page, the OCR's own seconds
  (render, detect, recognise, lay out: what `--format text` costs) beside the rest (the text
  layer, the incremental update written to disk), from the same pages;
* memory: the peak RSS (the child's own VmHWM) of `desklens ocr SCAN --format pdf --out DIR`
  on a scan of few pages and of many, and of `--format text` on the many beside it.

    .venv/bin/python bench/documents_out_bench.py [--pages 50] [--write]
    .venv/bin/python bench/documents_out_bench.py --smoke   # 2 small pages; prints only
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ocr_samples import WORDS  # bench/ is on sys.path
from PIL import Image
from results import publish
from smoke import add_smoke_options

from desktop.core.ocr.engine import OcrEngine
from desktop.core.ocr.rendered_pages import Page, font, wrap
from desktop.core.ocr.searchable_pdf import write_searchable

ROOT = Path(__file__).resolve().parents[1]
HEADING = "## Documents out: searchable PDF cost and memory (issue 28)"
A4_150DPI = (1240, 1754)
SMOKE_PAGE = (620, 480)  # a few lines: --smoke runs in seconds
CHILD = (
    "import atexit, re, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\npeak-rss-kb=' + re.search("
    "r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1) + '\\n'))\n"
    "from desktop.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def scan_page(rng: random.Random, number: int, size: tuple[int, int]) -> Image.Image:
    """A page of prose as a scanner makes it: a JPEG at 150 dpi."""
    width, height = size
    page = Page(width, height)
    face = font("serif", 24)
    y = 120
    page.text(120, y - 60, f"Report page {number}", font("serif-bold", 32))
    while y < height * 0.45:  # a letter's worth: the timing is the OCR's per line
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 70)))
        for line in wrap(words.capitalize() + ".", face, width - 240):
            page.text(120, y, line, face)
            y += 36
        y += 24
    buffer = io.BytesIO()
    page.image.save(buffer, "JPEG", quality=85)
    return Image.open(io.BytesIO(buffer.getvalue()))


def scan_pdf(path: Path, pages: int, size: tuple[int, int]) -> Path:
    rng = random.Random(28)
    images = [scan_page(rng, n, size) for n in range(1, pages + 1)]
    images[0].save(path, "PDF", resolution=150, save_all=True, append_images=images[1:])
    return path


@dataclass(frozen=True)
class Timing:
    ocr: float  # median seconds of a page's OCR
    layer: float  # the rest of the searchable PDF per page (total minus the OCR, / pages)
    lines: int


def timing(scan: Path, folder: Path) -> Timing:
    engine = OcrEngine()
    engine.warm_up()
    started = time.perf_counter()
    document = write_searchable(engine, scan, folder / "searchable.pdf").document
    total = time.perf_counter() - started
    ocr = [page.seconds for page in document.pages]
    lines = sum(len(page.lines) for page in document.pages)
    return Timing(statistics.median(ocr), (total - sum(ocr)) / len(ocr), lines)


def peak_rss_mb(scan: Path, folder: Path, fmt: str) -> float:
    env = {**os.environ, "DESKLENS_DATA_DIR": str(folder / "data")}
    args = [sys.executable, "-c", CHILD, "ocr", str(scan), "--format", fmt, "--out", str(folder)]
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    match = re.search(r"peak-rss-kb=(\d+)", done.stderr)
    if done.returncode != 0 or match is None:
        raise SystemExit(f"desklens ocr failed: {done.stderr[-2000:]}")
    return int(match.group(1)) / 1024


def report(pages: int, few: int, time: Timing, peaks: dict[str, float], size_mb: float) -> str:
    first, many, text = peaks.values()
    lines = [
        HEADING,
        "",
        f"`python bench/documents_out_bench.py --pages {pages} --write`: a {pages}-page scanned "
        f"document (150 dpi JPEG pages, prose on their top half, {time.lines} lines, "
        f"{size_mb:.1f} MB), "
        f"{platform.machine()}, {os.cpu_count()} logical CPUs (shared with other work).",
        "",
        "| searchable PDF, per page | seconds |",
        "|---|---|",
        f"| the OCR's own (render, detect, recognise, lay out; median) | {time.ocr:.2f} |",
        f"| the text layer and writing the PDF (the rest, mean) | {time.layer:.3f} |",
        "",
        "| `desklens ocr scan.pdf --out DIR` | peak RSS (MB) |",
        "|---|---|",
        *(f"| {label} | {peak:.0f} |" for label, peak in peaks.items()),
        "",
        f"The text layer costs {time.layer / time.ocr:.1%} of the OCR's time per page. From "
        f"{few} to {pages} pages the peak grows {many - first:+.0f} MB; beside `--format text` "
        f"on the same {pages} pages, the searchable PDF's own memory is {many - text:+.0f} MB "
        "(pypdf holds the input file for the incremental update; pages are rendered and read "
        "one at a time).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=50)
    add_smoke_options(parser)
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args()
    pages, few, size = (2, 1, SMOKE_PAGE) if args.smoke else (args.pages, 5, A4_150DPI)
    with tempfile.TemporaryDirectory(prefix="desklens-docs-bench-") as name:
        folder = Path(name)
        scans = {n: scan_pdf(folder / f"scan{n}.pdf", n, size) for n in (few, pages)}
        measured = timing(scans[pages], folder)
        peaks = {
            f"--format pdf, {few} pages": peak_rss_mb(scans[few], folder / "few", "pdf"),
            f"--format pdf, {pages} pages": peak_rss_mb(scans[pages], folder / "many", "pdf"),
            f"--format text, {pages} pages": peak_rss_mb(scans[pages], folder / "text", "text"),
        }
        size_mb = scans[pages].stat().st_size / 1e6
    publish(HEADING, report(pages, few, measured, peaks, size_mb), args.write and not args.smoke)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
