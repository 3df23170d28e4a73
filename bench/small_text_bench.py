"""Small text on large pages: the fast OCR with and without the second look in tiles
(desktop/core/ocr/detection_scale.py), side by side in one run.

    .venv/bin/python bench/small_text_bench.py            # the tables
    .venv/bin/python bench/small_text_bench.py --write    # into bench/RESULTS.md
    .venv/bin/python bench/small_text_bench.py --smoke    # one page of each kind (CI)

Rendered pages: a screen of one size with lines of one font and pixel size in two columns (the
lines of tests/ocr/test_small_text_pages.py); "lines" counts those found word for word in the
text. Screenshot pages: six of the app's own 1280 x 800 screenshots (docs/screenshots, in name
order) laid out on one 3840 x 2160 page, as on a 4K desktop at 100%; "words" counts the words
each screenshot gives when read alone that the 4K page's text also has. The two settings
alternate page by page in one process, FP32, 2 worker threads.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import publish  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options, check_smoke  # noqa: E402

from desktop.core.ocr import OcrEngine  # noqa: E402
from desktop.core.ocr.detection_scale import DetectorSettings  # noqa: E402
from desktop.core.ocr.rendered_pages import font  # noqa: E402

HEADING = "## Small text on large pages"
SCREENS = [(2560, 1440), (2560, 2560), (3840, 2160)]
FACES = ["sans", "serif", "arial"]
SIZES = [9, 10, 11, 12, 13, 16]
LINES = 8
SETTINGS = {
    "cap only": replace(DetectorSettings(), small_text_below_scale=0.0, fading_pixels=1 << 40),
    "tiles": DetectorSettings(),
}


def timed(engines: dict[str, OcrEngine], page: Image.Image) -> dict[str, tuple[str, float]]:
    """Each engine's text of `page` and the seconds it took, one after the other."""
    out = {}
    for name, engine in engines.items():
        started = time.perf_counter()
        text = engine.extract(page).text()
        out[name] = text, time.perf_counter() - started
    return out


def rendered_rows(engines: dict[str, OcrEngine], smoke: bool) -> list[str]:
    screens = SCREENS[2:] if smoke else SCREENS
    faces, sizes = (FACES[:1], SIZES[3:4]) if smoke else (FACES, SIZES)
    lines = [f"Entry {n}: the quick brown fox jumps over the lazy dog {n * 37}"
             for n in range(LINES)]  # fmt: skip
    rows = []
    for width, height in screens:
        for size in sizes:
            found, seconds = Counter[str](), Counter[str]()
            for key in faces:
                page = Image.new("RGB", (width, height), "white")
                draw, face = ImageDraw.Draw(page), font(key, size, required=True)
                for n, line in enumerate(lines):
                    xy = (40 + (n % 2) * width // 2, 40 + (n // 2) * 2 * size)
                    draw.text(xy, line, font=face, fill="black")
                for name, (text, took) in timed(engines, page).items():
                    found[name] += sum(line in text for line in lines)
                    seconds[name] += took
            total, pages = LINES * len(faces), len(faces)
            rows.append(
                f"| {width} x {height} | {size} px | {found['cap only']}/{total} | "
                f"{found['tiles']}/{total} | {seconds['cap only'] / pages:.1f} s | "
                f"{seconds['tiles'] / pages:.1f} s |"
            )
    return rows


def screenshot_rows(engines: dict[str, OcrEngine], smoke: bool) -> list[str]:
    shots = sorted(ROOT.glob("docs/screenshots/*.png"))
    shots = [path for path in shots if Image.open(path).size == (1280, 800)]
    sets = [shots[:1]] if smoke else [shots[:6], shots[6:12]]
    reader = engines["cap only"]
    rows = []
    for number, chosen in enumerate(sets, 1):
        alone = Counter[str]()
        page = Image.new("RGB", (3840, 2160), (40, 40, 48))
        for index, path in enumerate(chosen):
            shot = Image.open(path).convert("RGB")
            alone.update(re.findall(r"\w+", reader.extract(shot).text()))
            page.paste(shot, ((index % 3) * 1280, 80 + (index // 3) * 1000))
        cells = []
        for _name, (text, took) in timed(engines, page).items():
            words = Counter(re.findall(r"\w+", text))
            cells.append(f"{sum((alone & words).values())}/{sum(alone.values())} | {took:.1f} s")
        rows.append(f"| set {number} ({chosen[0].stem} ...) | " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write into bench/RESULTS.md")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    engines = {name: OcrEngine(detector=setting) for name, setting in SETTINGS.items()}
    for engine in engines.values():
        engine.warm_up()
    lines = [
        HEADING,
        "",
        "Command: `python bench/small_text_bench.py --write` (FP32, 2 cores; the two settings "
        'alternate page by page in one run). "cap only" is the detector at its 2048 px cap '
        'alone; "tiles" adds the second look at the page\'s own scale. Rendered pages: fonts '
        f"{', '.join(FACES)}, {LINES} lines per page in two columns.",
        "",
        "| Screen | Text | Lines read, cap only | Lines read, tiles | Time per page, cap only "
        "| Time per page, tiles |",
        "|---|---:|---:|---:|---:|---:|",
        *rendered_rows(engines, args.smoke),
        "",
        "Six of the app's 1280 x 800 screenshots on one 3840 x 2160 page (words of the "
        "screenshots read alone that the page's text has):",
        "",
        "| Page | Words, cap only | Time, cap only | Words, tiles | Time, tiles |",
        "|---|---:|---:|---:|---:|",
        *screenshot_rows(engines, args.smoke),
    ]
    publish(HEADING, "\n".join(lines), args.write)


if __name__ == "__main__":
    main()
