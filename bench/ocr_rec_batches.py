"""Short lines read together or one by one: the same text, and the time each way, on the
profile's pages (bench/RESULTS.md, "OCR: short lines read together").

    .venv/bin/python bench/ocr_rec_batches.py [--repeat 5] [--write]
    .venv/bin/python bench/ocr_rec_batches.py --smoke      # two styles, one repetition (CI)

One engine reads each page with short lines of one width batched (`REC_BATCH_WIDTH`, the
default) and with every line alone (the width set to 0), in turn, `--repeat` times; each
way's fastest run counts. Every page's text and each line's confidence must be the same both
ways (the run fails otherwise).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from ocr_profile import Run, read, samples  # noqa: E402  (bench/ is on sys.path)
from results import publish  # noqa: E402
from smoke import add_smoke_options, check_smoke  # noqa: E402

from desktop.core.ocr import (  # noqa: E402
    OcrEngine,
    OcrResult,
    model_inputs,  # noqa: E402
)

HEADING = "## OCR: short lines read together"


@contextmanager
def one_by_one() -> Iterator[None]:
    saved = model_inputs.REC_BATCH_WIDTH
    model_inputs.REC_BATCH_WIDTH = 0
    try:
        yield
    finally:
        model_inputs.REC_BATCH_WIDTH = saved


def reads(result: OcrResult) -> tuple[str, list[float]]:
    """The text, and each line's confidence to 9 places (a line's mean over its pieces may
    be summed in another order from run to run: the last bits differ on repeated reads)."""
    return result.text(), [round(line.confidence, 9) for line in result.lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per page and way")
    parser.add_argument("--only", help="comma-separated style names (make_<name>)")
    parser.add_argument("--write", action="store_true", help="into bench/RESULTS.md")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    if args.smoke:
        args.repeat, args.only = 1, args.only or "plain,bar_chart"
    only = set(args.only.split(",")) if args.only else None
    pages = samples(only, not args.smoke)
    engine = OcrEngine()
    engine.warm_up(every_width=not args.smoke)  # priming every width is for the timings
    rows, different = [], []
    for sample in pages:
        together, alone = Run(), Run()
        seen: dict[str, tuple[str, list[float]]] = {}
        for _ in range(args.repeat):
            together = read(engine, sample, together)
            seen["together"] = reads(engine.extract(sample.image))
            with one_by_one():
                alone = read(engine, sample, alone)
                seen["alone"] = reads(engine.extract(sample.image))
        if seen["together"] != seen["alone"]:
            different.append(sample.style)
        rows.append((sample.style, together, alone))
        print(f"{sample.name:24s} {together.seconds:.3f}s vs {alone.seconds:.3f}s", file=sys.stderr)
    if different:
        raise SystemExit(f"read differently together and alone: {', '.join(different)}")
    lines = [
        "| Style | recognition together s | alone s | ratio | page together s | alone s | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    ratios: dict[str, list[float]] = defaultdict(list)
    for style, together, alone in rows:
        rec_t, rec_a = together.stages["recognition"], alone.stages["recognition"]
        ratios["recognition"].append(rec_t / rec_a)
        ratios["page"].append(together.seconds / alone.seconds)
        lines.append(
            f"| {style} | {rec_t:.3f} | {rec_a:.3f} | {rec_t / rec_a:.2f} | "
            f"{together.seconds:.3f} | {alone.seconds:.3f} | "
            f"{together.seconds / alone.seconds:.2f} |"
        )
    total_t = sum(t.seconds for _, t, _ in rows)
    total_a = sum(a.seconds for _, _, a in rows)
    summary = [
        f"- the same text and line confidences both ways on all {len(rows)} pages",
        f"- recognition together / alone, median over pages: "
        f"{statistics.median(ratios['recognition']):.2f}",
        f"- page together / alone, median: {statistics.median(ratios['page']):.2f}; "
        f"all pages {total_t:.1f} s vs {total_a:.1f} s ({total_t / total_a:.2f})",
    ]
    command = f"python bench/ocr_rec_batches.py {' '.join(sys.argv[1:])}".strip()
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "the CPU's own")
    setup = (
        f"Command: `{command}`\n\nMachine: {os.cpu_count()} CPU cores, instruction set: {isa};"
        f" INT8 models. Fastest of {args.repeat} runs per page and way, the two ways in turn"
        " (one engine). Seconds per page."
    )
    body = "\n".join(lines) + "\n\n" + "\n".join(summary)
    publish(HEADING, f"{HEADING}\n\n{setup}\n\n{body}\n", args.write)


if __name__ == "__main__":
    main()
