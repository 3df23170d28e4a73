#!/usr/bin/env python3
"""Skipping repeated areas (pixel-lossless visual-token pruning): tokens kept, the decision's own
time, and vision / prefill / TTFT / reading time with pruning off and on.

    python bench/prune_bench.py --write      # Qwen3-VL-2B shape, random weights, INT8
    python bench/prune_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR

Tokens kept: every screenshot style of the OCR benchmark (two seeds each) and two photos, after
the engine's own resize at the default budget and at full resolution (no model needed). Engine
figures: the same random-weight model of the published shape as bench/vlm_bench.py (built once,
cached); each configuration in its own process (peak RSS its own): a new document screenshot
asked at once (cold TTFT), a second one read ahead (`prepare`: the reading time) then asked, a
photo asked at once. PyTorch fp32 at 1280x720 beside (bench/vlm_bench.py's child). Random
weights cost what trained ones do; answer quality with real weights is not measured here.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
import children  # noqa: E402  (bench/ is on sys.path)
import smoke  # noqa: E402
import vlm_bench  # noqa: E402
from results import publish  # noqa: E402

HEADING = "## Skipping repeated areas (pixel-lossless visual-token pruning)"
QUESTION = "What is the total amount?"
NEW_TOKENS = 16
FULL_RES = 16384  # a budget no screenshot reaches: the image at its own size
# (size, budget or 0 for the default): the configurations measured off and on
RUNS = [("1280x720", 0), ("1920x1080", 0), ("1920x1080", FULL_RES), ("1080x3000", 0)]
PHOTOS = ("china.jpg", "flower.jpg")  # real photographs shipped with scikit-learn


def photo(name: str, size: tuple[int, int] | None = None):
    import sklearn  # installed with the convert extra (nncf needs it)
    from PIL import Image

    path = Path(sklearn.__file__).parent / "datasets" / "images" / name
    image = Image.open(path).convert("RGB")
    return image.resize(size, Image.Resampling.BICUBIC) if size else image


def _spec(model: str, budget: int):
    from desktop.core.bounded_json import read_json
    from desktop.core.engine import EngineConfig
    from desktop.core.engine.config import read_vision_spec

    config = EngineConfig(max_visual_tokens=budget) if budget else EngineConfig()
    folder = Path(model)
    return read_vision_spec(folder, read_json(folder / "config.json")["vision_config"], config)


def _styles():
    from bench.ocr_styles_documents import DOCUMENT_STYLES
    from bench.ocr_styles_screens import SCREEN_STYLES
    from bench.ocr_styles_tables import CHART_AND_TABLE_STYLES

    return [*DOCUMENT_STYLES, *SCREEN_STYLES, *CHART_AND_TABLE_STYLES]


def child_kept(model: str, seeds: str, styles: str) -> dict:
    """Per style: (kept, full) visual tokens summed over the seeds, at the default budget and at
    full resolution; then the decision's own time. `styles`: how many (0: all)."""
    from desktop.core.engine.pruning import kept_units
    from desktop.core.engine.vision import prepare_image

    specs = {"default": _spec(model, 0), "full": _spec(model, FULL_RES)}
    images = []
    for maker in _styles()[: int(styles) or None]:
        for seed in range(int(seeds)):
            made = maker(random.Random(seed), f"{maker.__name__}-{seed}")
            images.append((made.style, made.image))
    images += [(f"photo ({name})", photo(name)) for name in PHOTOS]
    rows: dict = {}
    for style, image in images:
        for label, spec in specs.items():
            prepared = prepare_image(image, spec)
            kept = len(kept_units(prepared.pixels, spec.factor))
            cell = rows.setdefault(style, {}).setdefault(label, [0, 0, 0])
            cell[0], cell[1], cell[2] = (
                cell[0] + kept,
                cell[1] + prepared.visual_tokens,
                cell[2] + 1,
            )
    return {"styles": rows, "decision_ms": decision_ms(specs)}


def decision_ms(specs: dict) -> dict:
    """Median ms of the keep decision alone (the resize is the engine's anyway)."""
    from desktop.core.engine.pruning import kept_units
    from desktop.core.engine.vision import prepare_image

    out = {}
    for size in ("1280x720", "1920x1080"):
        shot = vlm_bench.document_screenshot(vlm_bench.SIZES[size])
        for label, spec in specs.items():
            pixels = prepare_image(shot, spec).pixels
            times = []
            for _ in range(21):
                start = time.perf_counter()
                kept_units(pixels, spec.factor)
                times.append(1000 * (time.perf_counter() - start))
            out[f"{size} {label} ({pixels.shape[1]}x{pixels.shape[0]})"] = statistics.median(times)
    return out


def child_engine(model: str, size: str, budget: str, skip: str) -> dict:
    """A new screenshot asked at once, a second one read ahead then asked, a photo asked."""
    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import EngineConfig, VLMEngine
    from desktop.core.images import load_image

    config = EngineConfig(skip_repeats=skip == "1")
    if int(budget):
        config.max_visual_tokens = int(budget)
    t0 = time.perf_counter()
    engine = VLMEngine.load(model, config)
    load_s = time.perf_counter() - t0
    settings = GenerationSettings(max_new_tokens=NEW_TOKENS, ignore_eos=True)
    shot = vlm_bench.SIZES[size]
    cold = engine.ask(
        Conversation(), QUESTION, [load_image(vlm_bench.document_screenshot(shot, 1))], settings
    )
    engine.reset()
    conversation, second = Conversation(), load_image(vlm_bench.document_screenshot(shot, 2))
    prep = engine.prepare(conversation, [second], settings)
    ready = engine.ask(conversation, QUESTION, [second], settings)
    engine.reset()
    pic = engine.ask(Conversation(), "Describe the photo.", [load_image(photo(PHOTOS[0], shot))],
                     settings)  # fmt: skip
    assert cold.ok and ready.ok and pic.ok, (cold.error, ready.error, pic.error)
    c, p = cold.stats, pic.stats
    return {
        "load_s": load_s, "kept": c.visual_tokens, "full": c.visual_tokens_full,
        "vision_s": c.vision_s, "prefill_s": c.prefill_s, "ttft_s": c.ttft_s,
        "decode_tps": c.tokens_per_s, "reading_s": prep.stats.total_s,
        "ready_ttft_s": ready.stats.ttft_s, "photo_kept": p.visual_tokens,
        "photo_full": p.visual_tokens_full, "photo_vision_s": p.vision_s,
        "photo_prefill_s": p.prefill_s, "photo_ttft_s": p.ttft_s,
        "peak_rss_gib": vlm_bench.peak_rss_gib(),
    }  # fmt: skip


CHILDREN = {"kept": child_kept, "engine": child_engine}


def kept_lines(kept: dict) -> list[str]:
    if "error" in kept:
        return [f"Tokens kept: error: {kept['error']}"]
    lines = [
        "Visual tokens kept per style (sum over the images of the style; the engine's resize "
        "at the default budget of 1,280 tokens, and at full resolution):",
        "",
        "| style | images | default budget: kept of all | share | full res: kept of all | share |",
        "|---|---|---|---|---|---|",
    ]
    totals = {"default": [0, 0], "full": [0, 0]}
    for style, cells in kept["styles"].items():
        d, f = cells["default"], cells["full"]
        lines.append(
            f"| {style} | {d[2]} | {d[0]} of {d[1]} | {d[0] / d[1]:.0%} | "
            f"{f[0]} of {f[1]} | {f[0] / f[1]:.0%} |"
        )
        if not style.startswith("photo"):
            for label, cell in (("default", d), ("full", f)):
                totals[label][0] += cell[0]
                totals[label][1] += cell[1]
    d, f = totals["default"], totals["full"]
    lines.append(f"| **all screenshots** | | {d[0]} of {d[1]} | **{d[0] / d[1]:.0%}** | "
                 f"{f[0]} of {f[1]} | **{f[0] / f[1]:.0%}** |")  # fmt: skip
    decisions = ", ".join(f"{k}: {v:.1f} ms" for k, v in kept["decision_ms"].items())
    return [*lines, "", f"The keep decision alone (numpy, median of 21): {decisions}."]


def engine_lines(runs: dict, torch: dict) -> list[str]:
    lines = [
        "| image | budget | skip repeats | tokens kept | vision | prefill | cold TTFT | "
        "reading time (prepare) | Send -> first token when read | decode | photo: kept, vision, "
        "prefill, TTFT | peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (size, budget), pair in runs.items():
        label = "full res" if budget else "default"
        for skip, r in (("off", pair["off"]), ("on", pair["on"])):
            if "error" in r:
                lines.append(f"| {size} | {label} | {skip} | error: {r['error']} |||||||||")
                continue
            lines.append(
                f"| {size} | {label} | {skip} | {r['kept']} of {r['full']} | "
                f"{r['vision_s']:.2f} s | {r['prefill_s']:.2f} s | {r['ttft_s']:.2f} s | "
                f"{r['reading_s']:.2f} s | {r['ready_ttft_s']:.2f} s | {r['decode_tps']:.1f} tok/s "
                f"| {r['photo_kept']} of {r['photo_full']}, {r['photo_vision_s']:.2f} s, "
                f"{r['photo_prefill_s']:.2f} s, {r['photo_ttft_s']:.2f} s | "
                f"{r['peak_rss_gib']:.2f} GiB |"
            )
        off, on = pair["off"], pair["on"]
        if "error" not in off and "error" not in on:
            vs_torch = ""
            if size == "1280x720" and not budget and "ttft_s" in torch:
                t = torch["ttft_s"]
                vs_torch = (f"; cold TTFT {on['ttft_s'] / t:.3f}x PyTorch fp32 ({t:.1f} s; "
                            f"off: {off['ttft_s'] / t:.3f}x)")  # fmt: skip
            lines.append(
                f"| {size} | {label} | **on / off** | {on['kept'] / on['full']:.0%} | "
                f"{on['vision_s'] / off['vision_s']:.2f}x | "
                f"{on['prefill_s'] / off['prefill_s']:.2f}x | "
                f"{on['ttft_s'] / off['ttft_s']:.2f}x{vs_torch} | "
                f"**{on['reading_s'] / off['reading_s']:.2f}x** | | | photo TTFT "
                f"{on['photo_ttft_s'] / off['photo_ttft_s']:.2f}x | |"
            )
    return lines


def main() -> int:
    if children.child_main(CHILDREN):
        return 0
    parser = smoke.model_bench_parser(__doc__)
    parser.add_argument("--sizes", nargs="*", default=None, help="subset of the image sizes")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch fp32's TTFT")
    args = parser.parse_args()
    checkpoint, ir = smoke.models(args, parser, vlm_bench.prepare_models)
    runs = [r for r in RUNS if not args.sizes or r[0] in args.sizes]
    seeds, styles = (1, 3) if args.smoke else (2, 0)  # 3 styles: 0 is all of them
    if args.smoke:
        runs = RUNS[:1]
    kept = children.run_child(__file__, "kept", ir, seeds, styles)
    print("kept", kept, flush=True)
    measured: dict = {}
    for size, budget in runs:
        measured[(size, budget)] = {
            skip: children.run_child(__file__, "engine", ir, size, budget, int(skip == "on"))
            for skip in ("off", "on")
        }
        print(size, budget, measured[(size, budget)], flush=True)
    torch = {}
    if not args.no_torch and any(size == "1280x720" for size, _ in runs):
        torch = children.run_child(vlm_bench.__file__, "torch", checkpoint, "1280x720", 0)
        print("torch", torch, flush=True)
    command = "python bench/prune_bench.py" + (" --smoke" if args.smoke else "")
    command += " --write" if args.write else ""
    model = "tiny test model" if args.smoke else "Qwen3-VL-2B shape, random weights, INT8"
    text = "\n".join([
        HEADING, "",
        f"Command: `{command}` ({model}, {os.cpu_count()} cores, {NEW_TOKENS} new tokens, single "
        "runs, all measured in one run; ratios computed from the measured rows).", "",
        *kept_lines(kept), "", *engine_lines(measured, torch),
    ])  # fmt: skip
    publish(HEADING, text, args.write and not args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
