"""Where the fast OCR's time goes, per benchmark style: detection, recognition and the rest
(layout, table grids, QR/barcode search, panes, empty cells), beside Tesseract's time for the
same page (bench/RESULTS.md, "OCR: where the time goes").

    .venv/bin/python bench/ocr_profile.py [--write]
    .venv/bin/python bench/ocr_profile.py --smoke      # two styles, one repetition (CI)

DeskLens (the default models: INT8) and Tesseract read each page in turn, `--repeat` times,
so load from other processes falls on both alike; each one's fastest run counts, and the
stages are those of DeskLens's fastest run. The pages are the OCR benchmark's
(bench/ocr_bench.py: same seed and order), one per style from the tuning seed and one from
the held-out seed.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from results import publish  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options, check_smoke  # noqa: E402

from bench.ocr_baseline import HELD_OUT_SEED, STYLES  # noqa: E402
from bench.ocr_engines import ensure_tools, run_tesseract  # noqa: E402
from bench.ocr_samples import Sample  # noqa: E402
from desktop.core.ocr import OcrEngine  # noqa: E402
from desktop.core.ocr.accuracy import cer  # noqa: E402
from desktop.core.ocr.ppocr import PpOcr  # noqa: E402

HEADING = "## OCR: where the time goes"
STAGES = {"detect": "detection", "_read_with_margins": "recognition"}


@dataclass
class Run:
    seconds: float = float("inf")
    stages: dict[str, float] = field(default_factory=dict)
    cer: float = 0.0


@contextmanager
def stage_clock(stages: dict[str, float]) -> Iterator[None]:
    """Adds the seconds spent in PpOcr's detection and recognition to `stages`."""
    originals = {name: getattr(PpOcr, name) for name in STAGES}

    def timed(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                stages[STAGES[name]] += time.perf_counter() - started

        return run

    for name, method in originals.items():
        setattr(PpOcr, name, timed(name, method))
    try:
        yield
    finally:
        for name, method in originals.items():
            setattr(PpOcr, name, method)


def read(engine: OcrEngine, sample: Sample, best: Run) -> Run:
    stages: dict[str, float] = defaultdict(float)
    with stage_clock(stages):
        started = time.perf_counter()
        result = engine.extract(sample.image)
        seconds = time.perf_counter() - started
    if seconds < best.seconds:
        rest = seconds - sum(stages.values())
        return Run(seconds, {**stages, "rest": rest}, cer(result.text(), sample.reference))
    return best


def samples(only: set[str] | None, held_out: bool) -> list[Sample]:
    """The OCR benchmark's first page of each style (its seed, its order), then the held-out
    pages."""
    makers = [m for m in STYLES if not only or m.__name__[5:] in only]
    rng = random.Random(7)
    made = []
    for maker in makers:  # ocr_bench draws two pages per style from one sequence
        made.append(maker(rng, f"{maker.__name__[5:]}-0"))
        maker(rng, f"{maker.__name__[5:]}-1")
    if held_out:
        held_rng = random.Random(HELD_OUT_SEED)
        for maker in makers:
            held = maker(held_rng, f"{maker.__name__[5:]}-held-0")
            held.style += ", held-out"
            made.append(held)
    return made


def table(rows: list[tuple[Sample, Run, float]]) -> str:
    lines = [
        "| Style | detection s | recognition s | rest s | DeskLens s | Tesseract s "
        "| DeskLens / Tesseract | CER DeskLens |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for sample, run, tesseract in rows:
        lines.append(
            f"| {sample.style} | {run.stages['detection']:.3f} | {run.stages['recognition']:.3f}"
            f" | {run.stages['rest']:.3f} | {run.seconds:.2f} | {tesseract:.2f}"
            f" | {run.seconds / tesseract:.2f} | {run.cer:.4f} |"
        )
    total = sum(run.seconds for _, run, _ in rows)
    parts = {
        stage: sum(run.stages[stage] for _, run, _ in rows) / total
        for stage in ("detection", "recognition", "rest")
    }
    faster = sum(run.seconds <= tesseract for _, run, tesseract in rows)
    ratio = statistics.median(run.seconds / tesseract for _, run, tesseract in rows)
    summary = [
        f"- DeskLens: {total:.1f} s over {len(rows)} pages; detection {parts['detection']:.0%}, "
        f"recognition {parts['recognition']:.0%}, the rest {parts['rest']:.0%}",
        f"- median DeskLens / Tesseract per page: {ratio:.2f}",
        f"- pages read at least as fast as Tesseract: {faster} of {len(rows)}",
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(summary)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per page and engine")
    parser.add_argument("--only", help="comma-separated style names (make_<name>)")
    parser.add_argument("--no-held-out", action="store_true", help="tuning pages only")
    parser.add_argument("--write", action="store_true", help="into bench/RESULTS.md")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    if args.smoke:
        args.repeat, args.only, args.no_held_out = 1, args.only or "plain,bar_chart", True
    ensure_tools()
    only = set(args.only.split(",")) if args.only else None
    pages = samples(only, not args.no_held_out)
    engine = OcrEngine()
    engine.warm_up(every_width=True)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for sample in pages:
            path = Path(folder) / f"{sample.name}.png"
            sample.image.save(path)
            run, tesseract = Run(), float("inf")
            for _ in range(args.repeat):
                run = read(engine, sample, run)
                tesseract = min(tesseract, run_tesseract(path, sample.lang)[1])
            rows.append((sample, run, tesseract))
            print(
                f"{sample.name:24s} DeskLens {run.seconds:.2f}s tesseract {tesseract:.2f}s",
                file=sys.stderr,
            )
    assert engine.model_files is not None
    command = f"python bench/ocr_profile.py {' '.join(sys.argv[1:])}".strip()
    precision = engine.model_files.precision.upper()
    setup = (
        f"Command: `{command}`\n\nMachine: {os.cpu_count()} CPU cores; DeskLens {precision}"
        " models, OpenVINO threads auto; Tesseract `--psm 3`, OMP_THREAD_LIMIT=1, its time"
        f" includes starting the process. Fastest of {args.repeat} runs per page, the two"
        " engines in turn. Seconds per page; detection and recognition are PpOcr.detect and"
        " the line reads (margin re-reads included), the rest is everything else of"
        " OcrEngine.extract (layout, table grids, QR/barcode search, panes, empty cells)."
    )
    publish(HEADING, f"{HEADING}\n\n{setup.strip()}\n\n{table(rows)}\n", args.write)


if __name__ == "__main__":
    main()
