"""INT8 against FP32 OCR at every instruction-set level this machine can run (issue 36).

    .venv/bin/python bench/ocr_isa_bench.py                   # the table, every level
    .venv/bin/python bench/ocr_isa_bench.py --write           # into bench/RESULTS.md
    .venv/bin/python bench/ocr_isa_bench.py --smoke           # one level, one page (CI)

The OCR benchmark's styles (bench/ocr_bench.py STYLES) are rendered from two seed ranges: the
benchmark's own (7: the pages earlier work was measured on) and a held-out one (2026: never
used for calibration or tuning; the calibration pages come from seeds 1000 and up, see
desktop/core/ocr/quantize.py). Each level runs in its own child process with
ONEDNN_MAX_CPU_ISA set (devkit/isa_levels.py), so one machine checks the VNNI and the non-VNNI
INT8 kernels it has; a level that crashes OpenVINO is reported as not checkable. Per style and
level: FP32's CER, INT8's CER, the difference, and how many pages INT8 read exactly as FP32;
then, per level, on how many pages each precision read the very text it read at the first
level, and the speed (the two precisions alternating page by page in that level's process).
"""

from __future__ import annotations

import argparse
import hashlib
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
SMOKE_STYLES = "plain"


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
                # what each precision read, to compare the levels' texts with each other
                row.update(
                    {f"{n}_sha": hashlib.sha256(t.encode()).hexdigest() for n, t in texts.items()}
                )
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
    """One row per style and seed range, one column per level that ran: INT8's CER minus
    FP32's, and how many pages INT8 read exactly as FP32 did; FP32's own CER at the first
    level. Levels that could not run are listed under the table."""
    ran = dict(_ran(results))
    labels = [isa_levels.label(level) for level in ran]
    lines = [
        "| style | split | pages | FP32 CER | "
        + " | ".join(f"INT8 − FP32, same text: {n}" for n in labels)
        + " |",
        "|---|---|---:|---:|" + "---:|" * len(labels),
    ]
    groups: dict[tuple[str, str], dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for level, rows in ran.items():
        for row in rows:
            groups[(row["style"], row["split"])][level].append(row)
            groups[("**all**", row["split"])][level].append(row)
    for (style, split), by_level in sorted(
        groups.items(), key=lambda item: (item[0][0].startswith("*"), item[0])
    ):
        first = next(iter(by_level.values()))
        cells = [_cell(by_level[level]) for level in ran]
        lines.append(
            f"| {style} | {split} | {len(first)} | {_mean(first, 'fp32_cer'):.4f} | "
            + " | ".join(cells)
            + " |"
        )
    lines += [
        f"\n{isa_levels.label(level)}: {rows}"
        for level, rows in results.items()
        if isinstance(rows, str)
    ]
    return lines


def _ran(results: dict[str, list[dict] | str]) -> list[tuple[str, list[dict]]]:
    """The levels that read pages, with their rows, in the order they ran."""
    return [(level, rows) for level, rows in results.items() if isinstance(rows, list) and rows]


def _mean(group: list[dict], key: str) -> float:
    return sum(row[key] for row in group) / len(group)


def _cell(group: list[dict]) -> str:
    if not group:
        return "–"
    difference = _mean(group, "int8_cer") - _mean(group, "fp32_cer")
    return f"{difference:+.4f}, {sum(row['same'] for row in group)}/{len(group)}"


def speed(rows: list[dict], level: str) -> str:
    int8 = sum(row["int8_seconds"] for row in rows)
    fp32 = sum(row["fp32_seconds"] for row in rows)
    return (
        f"- {isa_levels.label(level)}: INT8 {int8:.1f} s, FP32 {fp32:.1f} s for {len(rows)} "
        f"pages, **INT8 {fp32 / int8:.2f}x faster**"
    )


def across_levels(results: dict[str, list[dict] | str]) -> list[str]:
    """Per level below the first: on how many pages each precision read the very text it read
    at the first level (the same integers on every CPU should give the same text)."""
    ran = _ran(results)
    if len(ran) < 2:
        return []
    first_level, first = ran[0]
    lines = []
    for level, rows in ran[1:]:
        counts = {
            name: sum(
                a[f"{name}_sha"] == b[f"{name}_sha"] for a, b in zip(first, rows, strict=True)
            )
            for name in ("int8", "fp32")
        }
        lines.append(
            f"- {isa_levels.label(level)} against {isa_levels.label(first_level)}: INT8 read the "
            f"same text on {counts['int8']}/{len(rows)} pages, FP32 on {counts['fp32']}/{len(rows)}"
        )
    return lines


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
    same = across_levels(results)
    if same:
        lines += ["The same text at every level, page by page:", "", *same, ""]
    timed = _ran(results)
    if timed:
        lines += [
            "Speed, the two precisions alternating page by page in one process per level:",
            "",
            *(speed(rows, level) for level, rows in timed),
        ]
    publish(HEADING, "\n".join(lines), args.write)


if __name__ == "__main__":
    main()
