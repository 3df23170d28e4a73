"""What the QR/barcode search costs the OCR on pages without codes (issue 16), side by side in
one process: every benchmark page is read with the search and without it (the engine's
`find_codes` swapped for a no-op), alternately, repeatedly; the fastest run of each counts.

    .venv/bin/python bench/codes_bench.py [--per-class 2] [--repeat 3] [--write]

Also counts the codes "found" on these pages, which have none (false positives).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import publish  # noqa: E402  (bench/ is on sys.path)

from bench.ocr_bench import STYLES  # noqa: E402
from desktop.core.ocr import OcrEngine  # noqa: E402
from desktop.core.ocr import engine as engine_module  # noqa: E402
from desktop.core.ocr.codes import find_codes  # noqa: E402

HEADING = "## QR codes and barcodes: the search's cost on pages without codes"


@dataclass
class Timing:
    style: str
    size: tuple[int, int]
    without: float  # seconds: OCR with the code search switched off
    with_search: float  # seconds: OCR as shipped
    search: float  # seconds: find_codes alone on the page
    false_codes: int


def timed_extract(engine: OcrEngine, image, search: bool) -> tuple[float, int]:
    engine_module.find_codes = find_codes if search else (lambda _gray: [])
    started = time.perf_counter()
    result = engine.extract(image)
    return time.perf_counter() - started, len(result.codes)


def measure(engine: OcrEngine, sample, repeat: int) -> Timing:
    gray = cv2.cvtColor(np.asarray(sample.image), cv2.COLOR_RGB2GRAY)
    without, with_search, search, found = [], [], [], 0
    for turn in range(repeat):
        order = (False, True) if turn % 2 == 0 else (True, False)  # neither always goes first
        for on in order:
            seconds, codes = timed_extract(engine, sample.image, on)
            (with_search if on else without).append(seconds)
            found = max(found, codes)
        started = time.perf_counter()
        find_codes(gray)
        search.append(time.perf_counter() - started)
    engine_module.find_codes = find_codes
    return Timing(
        sample.style, sample.image.size, min(without), min(with_search), min(search), found
    )


def report(rows: list[Timing], args: argparse.Namespace) -> str:
    by_style: dict[str, list[Timing]] = {}
    for row in rows:
        by_style.setdefault(row.style, []).append(row)
    table = [
        "| Style | pages | size | OCR s without search | OCR s with search | search ms | "
        "search / OCR | codes found |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for style, group in by_style.items():
        without = statistics.mean(r.without for r in group)
        with_search = statistics.mean(r.with_search for r in group)
        search = statistics.mean(r.search for r in group)
        size = "x".join(map(str, group[0].size))
        table.append(
            f"| {style} | {len(group)} | {size} | {without:.3f} | {with_search:.3f} | "
            f"{search * 1000:.1f} | {search / without:.1%} | {sum(r.false_codes for r in group)} |"
        )
    total_without = sum(r.without for r in rows)
    total_search = sum(r.search for r in rows)
    total_with = sum(r.with_search for r in rows)
    return "\n".join(
        [
            HEADING,
            "",
            f"`python bench/codes_bench.py --per-class {args.per_class} --repeat {args.repeat}`: "
            f"{len(rows)} benchmark pages (no codes on them), each read with and without the "
            "search, alternately in one process; the fastest of the runs counts. 2 cores, "
            "shared with other work: the two OCR columns differ by noise as much as by the "
            "search, so the search is also timed alone on each page.",
            "",
            *table,
            "",
            f"All pages: the search takes {total_search:.2f} s of {total_without:.2f} s of OCR "
            f"(**{total_search / total_without:.1%}**); OCR with it {total_with:.2f} s vs "
            f"{total_without:.2f} s without ({total_with / total_without - 1:+.1%}). Codes "
            f"found on pages that have none: {sum(r.false_codes for r in rows)}.",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    engine = OcrEngine()
    engine.warm_up()
    rng = random.Random(args.seed)
    samples = [maker(rng, maker.__name__[5:]) for maker in STYLES for _ in range(args.per_class)]
    rows = []
    for sample in samples:
        rows.append(measure(engine, sample, args.repeat))
        row = rows[-1]
        print(f"{sample.name:24s} {row.without:.3f} {row.with_search:.3f} "
              f"{row.search * 1000:.1f} ms", file=sys.stderr)  # fmt: skip
    publish(HEADING, report(rows, args), args.write)


if __name__ == "__main__":
    main()
