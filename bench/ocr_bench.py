"""OCR benchmark: DeskLens's OCR (PP-OCR on OpenVINO + layout) against Tesseract 5.

Renders its own screenshots with known text (desktop/core/ocr/rendered_pages.py draws them):
the document styles of issue 3 (bench/ocr_styles_documents.py: light and dark themes, fonts
and sizes, two columns, tables, an invoice, code, low contrast, JPEG artefacts, HiDPI, a
slightly rotated photo, CJK, an application window) and the everyday screens of issue 20
(bench/ocr_styles_screens.py and ocr_styles_tables.py: chat threads light and dark, slides,
settings forms, accented European text, bar and line charts, an invoice with a key-value
block, a report table without rules) and the pages of issue 36 (bench/ocr_styles_pages.py:
documentation in two columns with headings, an e-mail pager, a man page, a terminal UI). Each
style also gets a row ", held-out" of pages from seed HELD_OUT_SEED (bench/ocr_baseline.py),
which nobody tunes the layout on. Each image is read by both engines in one run; the
report gives the character error rate (CER), seconds per image, DeskLens's table-structure F1
and the decorations it read as text (bench/ocr_scoring.py, bench/ocr_report.py).

    .venv/bin/python bench/ocr_bench.py                 # print the table
    .venv/bin/python bench/ocr_bench.py --precision both --write   # INT8 and FP32, into RESULTS.md
    .venv/bin/python bench/ocr_bench.py --smoke         # three styles, one image each (CI)

CER (desktop.core.ocr.accuracy.cer, the tests' function too) is the edit distance between the
engine's text and the reference text (the lines in natural reading order), divided by the
reference length, after normalising whitespace: runs of spaces and tabs become one space,
blank lines go, and spaces next to CJK characters are dropped (Tesseract spaces out Chinese
characters). Line breaks count, so reading order counts.

Tesseract runs as its command-line tool with OMP_THREAD_LIMIT=1, its fastest setting on a
shared 2-core machine (its default OpenMP threading was 7x slower there), and with the right
language per image (eng, chi_sim+eng for CJK, deu/fra/spa/pol/ces for accented text). Its
time includes starting the process. If it (or the fonts) is missing, the script installs
Debian's packages with apt-get.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
from pathlib import Path

import openvino

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import RESULTS, write_section  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options, check_smoke  # noqa: E402

from bench.ocr_baseline import HELD_OUT_SEED, STYLES, Maker  # noqa: E402
from bench.ocr_engines import (  # noqa: E402
    TESSERACT,
    ensure_tools,
    make_engines,
    run_desklens,
    run_tesseract,
)
from bench.ocr_report import HEADING, report  # noqa: E402
from bench.ocr_samples import Sample  # noqa: E402
from bench.ocr_scoring import Reading, Score, desklens_reading, tesseract_reading  # noqa: E402
from bench.ocr_styles_documents import (  # noqa: E402
    DOCUMENT_STYLES,
    make_code,
    make_invoice,
    make_plain,
    make_small,
    make_two_columns,
    make_ui,
)
from bench.ocr_styles_screens import SCREEN_STYLES  # noqa: E402
from bench.ocr_styles_tables import CHART_AND_TABLE_STYLES  # noqa: E402
from desktop.core.ocr import OcrEngine  # noqa: E402
from desktop.core.ocr.accuracy import CJK_CHAR, cer  # noqa: E402

# What the other benchmarks take from here (ocr_cli_bench, api_bench, draft_bench, codes_bench).
__all__ = [
    "CJK_CHAR",
    "STYLES",
    "Sample",
    "cer",
    "make_code",
    "make_invoice",
    "make_plain",
    "make_small",
    "make_two_columns",
    "make_ui",
]

NEW_STYLES: list[Maker] = [*SCREEN_STYLES, *CHART_AND_TABLE_STYLES]  # issue 20's
HELD_OUT = ", held-out"  # the style's row of pages from seeds nobody tunes on


def measure(
    samples: list[Sample], engines: dict[str, OcrEngine], repeat: int, folder: Path
) -> list[Score]:
    scores = []
    for sample in samples:
        path = folder / f"{sample.name}.png"
        sample.image.save(path)
        # Alternate the engines so that load from other processes hits all of them alike;
        # the fastest of `repeat` runs is each engine's time, the first run's text is scored.
        readings: dict[str, Reading] = {}
        ours = {label: [run_desklens(engine, sample.image)] for label, engine in engines.items()}
        theirs = [run_tesseract(path, sample.lang)]
        for _ in range(repeat - 1):
            for label, engine in engines.items():
                ours[label].append(run_desklens(engine, sample.image))
            theirs.append(run_tesseract(path, sample.lang))
        for label, runs in ours.items():
            readings[label] = desklens_reading(runs[0][0], min(s for _, s in runs), sample)
        readings[TESSERACT] = tesseract_reading(theirs[0][0], min(s for _, s in theirs), sample)
        scores.append(Score(sample, readings))
        summary = "  ".join(
            f"{label} {reading.cer:.4f} {reading.seconds:5.2f}s"
            for label, reading in readings.items()
        )
        print(
            f"{sample.name:22s} {sample.image.width}x{sample.image.height:<5d} {summary}",
            file=sys.stderr,
        )
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-class", type=int, default=2, help="images per style (default 2)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per image and engine")
    parser.add_argument("--threads", type=int, default=None, help="DeskLens OpenVINO threads")
    parser.add_argument(
        "--precision",
        choices=["auto", "fp32", "int8", "both"],
        default="auto",
        help="DeskLens models: auto (INT8 when quantized, else FP32), or both side by side",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--held-out",
        type=int,
        default=1,
        help=f"images per style from seed {HELD_OUT_SEED} (never tuned on), in rows of their own",
    )
    parser.add_argument("--only", help="comma-separated style names (make_<name>) to run")
    parser.add_argument("--keep", type=Path, help="also save the rendered images in this folder")
    parser.add_argument("--write", action="store_true", help=f"write the table into {RESULTS}")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    if args.smoke:
        args.per_class, args.repeat, args.only = 1, 1, args.only or "plain,invoice,chat_light"
        args.held_out = 0

    tesseract = ensure_tools()
    makers = [m for m in STYLES if not args.only or m.__name__[5:] in args.only.split(",")]
    rng = random.Random(args.seed)  # one sequence: the issue-20 styles come after the others
    made = [
        (maker, maker(rng, f"{maker.__name__[5:]}-{index}"))
        for maker in makers
        for index in range(args.per_class)
    ]
    held_rng = random.Random(HELD_OUT_SEED)
    for maker in makers:
        for index in range(args.held_out):
            held = maker(held_rng, f"{maker.__name__[5:]}-held-{index}")
            held.style += HELD_OUT
            made.append((maker, held))
    samples = [sample for _, sample in made]
    new_styles = {sample.style for maker, sample in made if maker in NEW_STYLES}
    earlier = {s.style for m, s in made if m in DOCUMENT_STYLES and not s.style.endswith(HELD_OUT)}
    engines = make_engines(args.precision, args.threads)
    # A session that has read a few screenshots: models compiled, common input shapes seen.
    # The warm-up images come from another seed, so no measured image is read beforehand.
    warm_rng = random.Random(args.seed + 1000)
    for maker in makers:
        image = maker(warm_rng, "warm-up").image
        for engine in engines.values():
            engine.extract(image)
    with tempfile.TemporaryDirectory() as temp:
        folder = args.keep or Path(temp)
        folder.mkdir(parents=True, exist_ok=True)
        scores = measure(samples, engines, args.repeat, folder)
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"
    setup = (
        f"Machine: {machine}. DeskLens: OpenVINO {ov_version()} on CPU, "
        f"threads: {args.threads or 'auto'}; INT8 models (the default) built by the app "
        "from the committed NNCF decisions (`desktop/core/ocr/int8.py`) and FP32 models "
        "(`DESKLENS_OCR_PRECISION=fp32`). "
        f"{tesseract}: `--psm 3`, OMP_THREAD_LIMIT=1, time includes starting the process."
    )
    command = "python bench/ocr_bench.py " + " ".join(sys.argv[1:])
    section = report(scores, list(engines), command.strip(), setup, new_styles, earlier)
    print(section)
    if args.write:
        write_section(HEADING, section)
        print(f"Written to {RESULTS}", file=sys.stderr)


def ov_version() -> str:
    return openvino.get_version().split("-")[0]


if __name__ == "__main__":
    main()
