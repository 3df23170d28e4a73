"""INT8 against FP32 OCR at every instruction-set level this machine can run (issue 36).

    .venv/bin/python bench/ocr_isa_bench.py                   # the table, every level
    .venv/bin/python bench/ocr_isa_bench.py --write           # into bench/RESULTS.md
    .venv/bin/python bench/ocr_isa_bench.py --smoke           # one level, three pages (CI)

The OCR benchmark's styles (bench/ocr_bench.py STYLES) are rendered from two seed ranges: the
benchmark's own (7: the pages earlier work was measured on) and a held-out one (2026: never
used for calibration or tuning; the calibration pages come from seeds 1000 and up, see
desktop/core/ocr/quantize.py). Each level runs in its own child process with
ONEDNN_MAX_CPU_ISA set (devkit/isa_levels.py), so one machine checks the VNNI and the non-VNNI
INT8 kernels it has; a level that crashes OpenVINO is reported as not checkable. Per style and
level: FP32's CER, INT8's CER, the difference, and how many pages INT8 read exactly as FP32.
The speed row alternates the two precisions page by page in one process at the native level.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import publish  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options, check_smoke  # noqa: E402

from devkit import isa_levels  # noqa: E402

HEADING = "## OCR INT8 against FP32 on every instruction set"
SEEDS = {"tuned": 7, "held-out": 2026}
SMOKE_STYLES = "plain,low_contrast,invoice"


def child(args: argparse.Namespace) -> None:
    """Reads the pages with both precisions; one JSON line per page on stdout."""
    from bench.ocr_bench import STYLES
    from desktop.core.ocr import OcrEngine
    from desktop.core.ocr.accuracy import cer

    engines = {name: OcrEngine(precision=name) for name in ("int8", "fp32")}
    for engine in engines.values():
        engine.warm_up()
    makers = [m for m in STYLES if not args.only or m.__name__[5:] in args.only.split(",")]
    for split, seed in SEEDS.items():
        rng = random.Random(seed)
        for maker in makers:
            for index in range(args.per_class):
                sample = maker(rng, f"{maker.__name__[5:]}-{split}-{index}")
                row = {"style": sample.style, "split": split, "name": sample.name}
                texts = {}
                for name, engine in engines.items():
                    started = time.perf_counter()
                    texts[name] = engine.extract(sample.image).text()
                    row[f"{name}_seconds"] = time.perf_counter() - started
                    row[f"{name}_cer"] = cer(texts[name], sample.reference)
                row["same"] = texts["int8"] == texts["fp32"]
                print(json.dumps(row), flush=True)


def run_level(level: str, args: argparse.Namespace) -> list[dict] | str:
    """The rows of one level, or why it could not be checked."""
    command = [sys.executable, __file__, "--child", "--per-class", str(args.per_class)]
    if args.only:
        command += ["--only", args.only]
    done = subprocess.run(
        command, env=isa_levels.environment(level), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        cause = f"signal {-done.returncode}" if done.returncode < 0 else f"exit {done.returncode}"
        return f"not checkable here: OpenVINO ended with {cause}"
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def table(results: dict[str, list[dict] | str]) -> list[str]:
    lines = [
        "| style | split | level | pages | FP32 CER | INT8 CER | INT8 − FP32 | same text |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for level, rows in results.items():
        if isinstance(rows, str):
            lines.append(f"| all | all | {isa_levels.label(level)} | – | – | – | – | {rows} |")
            continue
        groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
        for row in rows:
            groups[(row["style"], row["split"])].append(row)
        for (style, split), group in sorted(groups.items()):
            lines.append(_row(style, split, isa_levels.label(level), group))
        for split in SEEDS:
            everything = [row for row in rows if row["split"] == split]
            lines.append(_row("**all**", split, isa_levels.label(level), everything))
    return lines


def _row(style: str, split: str, level: str, group: list[dict]) -> str:
    fp32 = sum(row["fp32_cer"] for row in group) / len(group)
    int8 = sum(row["int8_cer"] for row in group) / len(group)
    same = sum(row["same"] for row in group)
    return (
        f"| {style} | {split} | {level} | {len(group)} | {fp32:.4f} | {int8:.4f} | "
        f"{int8 - fp32:+.4f} | {same}/{len(group)} |"
    )


def speed(rows: list[dict]) -> str:
    int8 = sum(row["int8_seconds"] for row in rows)
    fp32 = sum(row["fp32_seconds"] for row in rows)
    return (
        f"Speed at the native level, the two precisions alternating page by page in one "
        f"process: INT8 {int8:.1f} s, FP32 {fp32:.1f} s for {len(rows)} pages: "
        f"**INT8 {fp32 / int8:.2f}x faster**."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=2, help="pages per style and seed")
    parser.add_argument("--only", help="comma-separated style names (make_<name>) to run")
    parser.add_argument("--levels", help="comma-separated levels (default: all this CPU has)")
    parser.add_argument("--write", action="store_true", help="write into bench/RESULTS.md")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    if args.child:
        child(args)
        return
    if args.smoke:
        args.per_class, args.only, args.levels = 1, args.only or SMOKE_STYLES, isa_levels.NATIVE
    levels = args.levels.split(",") if args.levels else isa_levels.available_levels()
    results = {level: run_level(level, args) for level in levels}
    native = results.get(isa_levels.NATIVE)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"
    lines = [
        HEADING,
        "",
        f"`python bench/ocr_isa_bench.py {' '.join(sys.argv[1:])}`".replace(" `", "`"),
        "",
        f"Machine: {machine}; native level {isa_levels.native_name()}. Levels checked: "
        + ", ".join(isa_levels.label(level) for level in levels)
        + ". A VNNI level can only be checked on a CPU that has it.",
        "",
        *table(results),
        "",
    ]
    if isinstance(native, list) and native:
        lines.append(speed(native))
    publish(HEADING, "\n".join(lines), args.write)


if __name__ == "__main__":
    main()
