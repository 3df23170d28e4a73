"""What the QR/barcode search costs the OCR on pages without codes (issues 16 and 32), side by
side in one process: every benchmark page is read with the search and without it (the
engine's `find_codes` swapped for a no-op), alternately, repeatedly; the fastest run of each
counts. The search is also timed alone, zxing-cpp's (as shipped) against the OpenCV search
with our own Code 128 reader it replaced, loaded from git (`--baseline`, the last commit that
had it), on the same pages in the same rounds.

    .venv/bin/python bench/codes_bench.py [--per-class 1] [--repeat 3] [--write]
    .venv/bin/python bench/codes_bench.py --smoke   # seconds: 3 pages, 1 round, no RESULTS

Also counts the codes "found" on these pages, which have none (false positives).
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import publish  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options  # noqa: E402

from bench.ocr_bench import STYLES  # noqa: E402
from desktop.core.ocr import OcrEngine  # noqa: E402
from desktop.core.ocr import engine as engine_module  # noqa: E402
from desktop.core.ocr.codes import find_codes  # noqa: E402

HEADING = "## QR codes and barcodes: the search's cost on pages without codes"
BASELINE = "1ffa6511c17724555436d929a5c1c5b2d34276b9"  # OpenCV + code128.py, before issue 32
Search = Callable[[np.ndarray], list]


@dataclass
class Timing:
    style: str
    size: tuple[int, int]
    without: float  # seconds: OCR with the code search switched off
    with_search: float  # seconds: OCR as shipped
    search: float  # seconds: find_codes alone on the page
    baseline: float | None  # seconds: the OpenCV search alone, None when not loaded
    false_codes: int
    baseline_false_codes: int


def load_baseline(revision: str) -> Search | None:
    """The OpenCV `find_codes` (with `code128.py`) as committed at `revision`, imported from a
    temporary folder; None where git cannot show it (a shallow clone)."""
    sources = {}
    for name in ("codes", "code128"):
        shown = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{revision}:desktop/core/ocr/{name}.py"],
            capture_output=True,
            text=True,
        )
        if shown.returncode != 0:
            return None
        sources[name] = shown.stdout
    folder = Path(tempfile.mkdtemp(prefix="codes-baseline-"))
    (folder / "baseline_code128.py").write_text(sources["code128"], encoding="utf-8")
    codes = sources["codes"].replace(
        "from desktop.core.ocr.code128 import", "from baseline_code128 import"
    )
    (folder / "baseline_codes.py").write_text(codes, encoding="utf-8")
    sys.path.insert(0, str(folder))
    return importlib.import_module("baseline_codes").find_codes


def timed_extract(engine: OcrEngine, image, search: bool) -> tuple[float, int]:
    engine_module.find_codes = find_codes if search else (lambda _gray: [])
    started = time.perf_counter()
    result = engine.extract(image)
    return time.perf_counter() - started, len(result.codes)


def timed_search(search: Search, gray: np.ndarray) -> tuple[float, int]:
    started = time.perf_counter()
    found = search(gray)
    return time.perf_counter() - started, len(found)


def measure(engine: OcrEngine, sample, repeat: int, baseline: Search | None) -> Timing:
    gray = cv2.cvtColor(np.asarray(sample.image), cv2.COLOR_RGB2GRAY)
    without, with_search, search, old, found, old_found = [], [], [], [], 0, 0
    for turn in range(repeat):
        order = (False, True) if turn % 2 == 0 else (True, False)  # neither always goes first
        for on in order:
            seconds, codes = timed_extract(engine, sample.image, on)
            (with_search if on else without).append(seconds)
            found = max(found, codes)
        # The searches are cheap: 3 turns each per OCR round, alternating which goes first.
        searches = [(find_codes, search), (baseline, old)] * 3
        for function, times in searches if turn % 2 == 0 else searches[::-1]:
            if function is not None:
                seconds, codes = timed_search(function, gray)
                times.append(seconds)
                if function is baseline:
                    old_found = max(old_found, codes)
                else:
                    found = max(found, codes)
    engine_module.find_codes = find_codes
    return Timing(sample.style, sample.image.size, min(without), min(with_search), min(search),
                  min(old) if old else None, found, old_found)  # fmt: skip


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.1f}"


def report(rows: list[Timing], args: argparse.Namespace, command: str) -> str:
    by_style: dict[str, list[Timing]] = {}
    for row in rows:
        by_style.setdefault(row.style, []).append(row)
    table = [
        "| Style | pages | size | OCR s without search | OCR s with search | zxing-cpp ms | "
        "OpenCV (before) ms | search / OCR | codes found: zxing-cpp / OpenCV |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for style, group in by_style.items():
        without = statistics.mean(r.without for r in group)
        with_search = statistics.mean(r.with_search for r in group)
        search = statistics.mean(r.search for r in group)
        old = [r.baseline for r in group if r.baseline is not None]
        table.append(
            f"| {style} | {len(group)} | {'x'.join(map(str, group[0].size))} | {without:.3f} | "
            f"{with_search:.3f} | {_ms(search)} | {_ms(statistics.mean(old) if old else None)} | "
            f"{search / without:.1%} | {sum(r.false_codes for r in group)} / "
            f"{sum(r.baseline_false_codes for r in group) if old else '—'} |"
        )
    return "\n".join([HEADING, "", _intro(rows, args, command), "", *table, "", _totals(rows)])


def _intro(rows: list[Timing], args: argparse.Namespace, command: str) -> str:
    return (
        f"`{command}`: {len(rows)} benchmark pages (no codes on them), each read with and "
        "without the search, alternately in one process, and each search timed alone: "
        f"zxing-cpp (as shipped) against the OpenCV search it replaced (git {args.baseline[:7]}), "
        f"in the same rounds; the fastest of {args.repeat} OCR runs and of {3 * args.repeat} "
        "searches counts. 2 cores shared with other work (load average "
        f"{os.getloadavg()[1]:.1f} over the last 5 minutes of the run): the two OCR columns "
        "differ by noise as much as by the search, hence the search timed alone."
    )


def _totals(rows: list[Timing]) -> str:
    total_without = sum(r.without for r in rows)
    total_search = sum(r.search for r in rows)
    total_with = sum(r.with_search for r in rows)
    line = (
        f"All pages: zxing-cpp's search takes {total_search:.3f} s of {total_without:.2f} s of "
        f"OCR (**{total_search / total_without:.1%}**); OCR with it {total_with:.2f} s vs "
        f"{total_without:.2f} s without ({total_with / total_without - 1:+.1%}). Codes found "
        f"on pages that have none: **{sum(r.false_codes for r in rows)}**."
    )
    if all(r.baseline is not None for r in rows):
        total_old = sum(r.baseline or 0.0 for r in rows)
        ratios = [r.search / (r.baseline or 1.0) for r in rows]
        line += (
            f" The OpenCV search took {total_old:.3f} s on the same pages (zxing-cpp: "
            f"**{total_search / total_old - 1:+.0%}**; per page {min(ratios):.2f}x to "
            f"{max(ratios):.2f}x its time), and found {sum(r.baseline_false_codes for r in rows)} "
            "codes."
        )
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--baseline", default=BASELINE, help="git revision of the OpenCV search")
    add_smoke_options(parser)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    command = "python bench/codes_bench.py" + (
        " --smoke" if args.smoke else f" --per-class {args.per_class} --repeat {args.repeat}"
    )
    if args.smoke:
        args.repeat, args.write = 1, False
    baseline = load_baseline(args.baseline)
    if baseline is None:
        print(f"(git cannot show {args.baseline}: the OpenCV search is left out)", file=sys.stderr)
    engine = OcrEngine()
    engine.warm_up()
    rng = random.Random(args.seed)
    makers = STYLES[:3] if args.smoke else STYLES
    per_class = 1 if args.smoke else args.per_class
    samples = [maker(rng, maker.__name__[5:]) for maker in makers for _ in range(per_class)]
    rows = []
    for sample in samples:
        rows.append(measure(engine, sample, args.repeat, baseline))
        row = rows[-1]
        print(f"{sample.name:24s} {row.without:.3f} {row.with_search:.3f} "
              f"{_ms(row.search)} ms, before {_ms(row.baseline)} ms", file=sys.stderr)  # fmt: skip
    publish(HEADING, report(rows, args, command), args.write)


if __name__ == "__main__":
    main()
