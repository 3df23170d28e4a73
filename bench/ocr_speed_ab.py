"""OCR speed before and after a layout change, interleaved in one process: the detector and
recognizer run once per image and read, and the layout of both versions (the baseline's
modules loaded from git) orders the same fragments, one after the other, repeatedly.

    .venv/bin/python bench/ocr_speed_ab.py --baseline fda1c52 [--write]
    .venv/bin/python bench/ocr_speed_ab.py --smoke      # two styles, HEAD against itself (CI)

An image's time is the model run (measured on every repetition) plus the layout of one version
(table grids and reading order); the fastest repetition counts. Both versions' layouts take
the same fragments and pixels, so load from other processes cannot favour one.
"""

from __future__ import annotations

import argparse
import importlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import publish  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options, check_smoke  # noqa: E402

from bench.ocr_bench import STYLES  # noqa: E402
from desktop.core.ocr import OcrEngine  # noqa: E402
from desktop.core.ocr import layout as new_layout  # noqa: E402
from desktop.core.ocr import ruled_tables as new_grids  # noqa: E402

HEADING = "## OCR speed: layout before and after issue 20"
LAYOUT_MODULES = [
    "layout",
    "layout_items",
    "layout_tables",
    "reading_order",
    "ruled_tables",
    "models",
    "decorations",
    "screen_regions",
]


@dataclass
class Timing:
    style: str
    before: float  # seconds: models + the baseline's layout
    after: float  # seconds: models + today's layout
    layout_before: float
    layout_after: float


def baseline_modules(revision: str, folder: Path) -> tuple[ModuleType, ModuleType]:
    """The layout and grid modules as they were at `revision`, importable side by side with
    today's (their imports of each other renamed to the copy's package)."""
    package = folder / "baseline_ocr"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in LAYOUT_MODULES:
        shown = subprocess.run(
            ["git", "show", f"{revision}:desktop/core/ocr/{name}.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if shown.returncode != 0:
            continue  # a module the baseline did not have yet
        source = shown.stdout
        for other in LAYOUT_MODULES:
            source = source.replace(f"desktop.core.ocr.{other} ", f"baseline_ocr.{other} ")
            source = source.replace(f"desktop.core.ocr.{other}\n", f"baseline_ocr.{other}\n")
        (package / f"{name}.py").write_text(source)
    sys.path.insert(0, str(folder))
    return (
        importlib.import_module("baseline_ocr.layout"),
        importlib.import_module("baseline_ocr.ruled_tables"),
    )


def layout_seconds(
    layout: ModuleType, grids: ModuleType, fragments: list, gray: np.ndarray
) -> float:
    started = time.perf_counter()
    layout.arrange(fragments, grids.find_table_grids(gray) if fragments else [])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="fda1c52", help="git revision before the change")
    parser.add_argument("--per-class", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", action="store_true")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    if args.smoke:  # the same code path on the smallest work; any revision exists: HEAD's own
        args.baseline, args.per_class, args.repeat = "HEAD", 1, 1
    engine = OcrEngine()
    engine.warm_up()
    rng = random.Random(args.seed)
    makers = STYLES[:2] if args.smoke else STYLES
    samples = [maker(rng, maker.__name__[5:]) for maker in makers for _ in range(args.per_class)]
    with tempfile.TemporaryDirectory() as temp:
        old_layout, old_grids = baseline_modules(args.baseline, Path(temp))
        rows = []
        for sample in samples:
            rgb = np.asarray(sample.image)
            bgr, gray = np.ascontiguousarray(rgb[:, :, ::-1]), cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
            old_runs, new_runs, old_layouts, new_layouts = [], [], [], []
            for _ in range(args.repeat):
                started = time.perf_counter()
                fragments = engine._ppocr().read(bgr, engine.detector)  # the same for both
                models = time.perf_counter() - started
                old_layouts.append(layout_seconds(old_layout, old_grids, fragments, gray))
                new_layouts.append(layout_seconds(new_layout, new_grids, fragments, gray))
                old_runs.append(models + old_layouts[-1])
                new_runs.append(models + new_layouts[-1])
            rows.append(
                Timing(
                    sample.style, min(old_runs), min(new_runs), min(old_layouts), min(new_layouts)
                )
            )
            print(f"{sample.name:20s} {min(old_runs):.3f} {min(new_runs):.3f}", file=sys.stderr)
    publish(HEADING, report(rows, args), args.write)


def report(rows: list[Timing], args: argparse.Namespace) -> str:
    by_style: dict[str, list[Timing]] = {}
    for row in rows:
        by_style.setdefault(row.style, []).append(row)
    table = [
        "| Style | s/image before | s/image after | after / before | layout ms before | "
        "layout ms after |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for style, group in [*by_style.items(), ("**all**", rows)]:
        old = statistics.mean(t.before for t in group)
        new = statistics.mean(t.after for t in group)
        layout_old = 1000 * statistics.mean(t.layout_before for t in group)
        layout_new = 1000 * statistics.mean(t.layout_after for t in group)
        table.append(
            f"| {style} | {old:.3f} | {new:.3f} | {new / old:.3f} | {layout_old:.1f} | "
            f"{layout_new:.1f} |"
        )
    ratio = sum(t.after for t in rows) / sum(t.before for t in rows)
    verdict = "PASS" if abs(ratio - 1) <= 0.05 else "MISS"
    return "\n".join(
        [
            HEADING,
            "",
            f"Command: `python bench/ocr_speed_ab.py --baseline {args.baseline} "
            f"--per-class {args.per_class} --repeat {args.repeat}`",
            "",
            "Same images as the OCR table above (same seed), INT8 models, one process: per "
            "repetition the models read the image once and both layouts order those fragments "
            f"back to back; fastest of {args.repeat}. The machine (2 CPU cores) was shared "
            "with other work during the run, which the interleaving spreads over both.",
            "",
            *table,
            "",
            f"- {verdict}: total time after / before = {ratio:.3f} (target: within 5 %)",
            "",
        ]
    )


if __name__ == "__main__":
    main()
