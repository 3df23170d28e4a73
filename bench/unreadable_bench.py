#!/usr/bin/env python3
"""Calibration of "the fast OCR failed on this image" (desktop/core/ocr/readability.py).

    python bench/unreadable_bench.py --write
    python bench/unreadable_bench.py --smoke        # one page per script, two styles (CI)

Pages in scripts the recognizer has no characters for (Cyrillic and Arabic in DejaVu Sans,
Korean in Noto Sans CJK, with numbers among the words; rendered by
desktop/core/ocr/rendered_pages.py, light and dark, 14 to 28 px, some with an English title)
against every screenshot and document style of the OCR benchmark (bench/ocr_bench.py's
STYLES, two seeds each). Counts, per page, the lines the
detector found and the recognizer kept vs left out as unsure; reports how many foreign pages
are flagged (detection) and how many of our styles are (false alarms).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
from ocr_bench import STYLES  # noqa: E402
from results import publish  # noqa: E402
from smoke import add_smoke_options, check_smoke  # noqa: E402

from desktop.core.ocr.readability import (  # noqa: E402
    MIN_UNSURE_LINES,
    MIN_UNSURE_SHARE,
    Readability,
    readability,
)
from desktop.core.ocr.rendered_pages import Page, font  # noqa: E402

HEADING = "## Unreadable scripts: when the fast OCR says it failed"
SCRIPTS = {  # name: (font key, words separated by spaces)
    "Cyrillic": ("sans", "счёт итого сумма оплата дата клиент договор услуги доставка налог "
                 "привет проверка распознавания текста русском языке 4471 12,50 2025"),
    "Korean": ("cjk", "안녕하세요 세계 한국어 텍스트 인식 합계 금액 결제 날짜 영수증 "
               "고객 계약 서비스 배송 세금 4471 12,50 2025"),
    "Arabic": ("sans", "مرحبا بالعالم اختبار للتعرف على النص العربي المجموع المبلغ الدفع "
               "التاريخ العميل العقد 4471 12,50 2025"),
}  # fmt: skip
VARIANTS = [  # size, dark, English title
    (14, False, False),
    (18, True, False),
    (22, False, True),
    (28, True, True),
    (24, False, False),
]


def foreign_page(words: str, key: str, size: int, dark: bool, title: bool, seed: int):
    rng, words = random.Random(seed), words.split()
    background, ink = ((30, 31, 35), (230, 230, 230)) if dark else ((255, 255, 255), (25, 25, 25))
    page = Page(1000, 700, background=background, ink=ink)
    face, top = font(key, size), 24
    if title:
        page.lines(30, top, ["Quarterly report 2025"], font("sans-bold", size + 6))
        top += (size + 6) * 2
    while top < 700 - size * 2:
        page.lines(30, top, [" ".join(rng.choice(words) for _ in range(rng.randint(3, 8)))], face)
        top += round(size * 1.8)
    return page.image


def measure(ocr, image) -> Readability:
    return readability(ocr.extract(image))


def run(smoke: bool = False) -> tuple[list[tuple[str, Readability]], list[tuple[str, Readability]]]:
    from desktop.core.ocr import OcrEngine

    variants, makers, seeds = (
        (VARIANTS[:1], STYLES[:2], (3,)) if smoke else (VARIANTS, STYLES, (3, 11))
    )

    ocr = OcrEngine()
    foreign = []
    for name, (key, words) in SCRIPTS.items():
        for number, (size, dark, title) in enumerate(variants):
            image = foreign_page(words, key, size, dark, title, number)
            label = f"{name} {size}px{' dark' if dark else ''}{' +title' if title else ''}"
            foreign.append((label, measure(ocr, image)))
    ours = []
    for maker in makers:
        for seed in seeds:
            sample = maker(random.Random(seed), maker.__name__[5:])
            ours.append((f"{sample.style} #{seed}", measure(ocr, sample.image)))
    return foreign, ours


def report(foreign, ours) -> str:
    flagged = [name for name, r in foreign if r.failed]
    alarms = [name for name, r in ours if r.failed]
    worst = max(ours, key=lambda item: (item[1].unsure_lines, item[1].unsure_share))
    lines = [
        HEADING,
        "",
        "`python bench/unreadable_bench.py --write`. Rule (desktop/core/ocr/readability.py): the",
        f"image is flagged when at least {MIN_UNSURE_LINES} lines found by the detector were read",
        f"below the recognizer's confidence floor and they are at least {MIN_UNSURE_SHARE:.0%} of",
        "the lines found. A flagged extraction says so and offers **Read with AI**.",
        "",
        "| Foreign-script page | lines kept | lines unsure | flagged |",
        "|---|---|---|---|",
    ]
    for name, r in foreign:
        lines.append(
            f"| {name} | {r.read_lines} | {r.unsure_lines} | {'yes' if r.failed else 'no'} |"
        )
    lines += [
        "",
        f"**Detection: {len(flagged)}/{len(foreign)} foreign-script pages flagged. False alarms: "
        f"{len(alarms)}/{len(ours)} pages of our {len(STYLES)} screenshot and document styles "
        f"({len(alarms) / len(ours):.0%}).** Most unsure lines on one of our pages: "
        f"{worst[1].unsure_lines} of {worst[1].read_lines + worst[1].unsure_lines} "
        f"({worst[0]}).",
    ]
    if alarms:
        lines.append(f"Flagged by mistake: {', '.join(alarms)}.")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    foreign, ours = run(args.smoke)
    publish(HEADING, report(foreign, ours), args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
