#!/usr/bin/env python3
"""DeskLens's engine vs the naive PyTorch path (and VLMPipeline), same inputs, one run.

    python bench/vlm_bench.py            # Qwen3-VL-2B shape, random weights (~30 min here)
    python bench/vlm_bench.py --quick    # a small random model, a few minutes
    python bench/vlm_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR  # seconds

Builds (once, cached outside the repo) a random-weight checkpoint of the published shape, converts
it with the project's convert.py (INT8), then measures each runtime in its own subprocess (so peak
RSS is its own): load time, time to first token split into vision / prefill, decode tok/s, a
follow-up question, a known image in a new conversation. Also measures the machine's memory
bandwidth and GEMM throughput and prints each figure's distance to its floor. Random weights cost
the same as trained ones; answer quality is not measured here (it cannot be, offline).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import children  # noqa: E402  (bench/ is on sys.path)
import smoke  # noqa: E402
from results import write_section  # noqa: E402

NEW_TOKENS = 32
FAST_BUDGET = 512  # the "image detail" one step below the default, for the 0.3x target
BATCH_TOKENS = 128  # an extraction is long: that is where decoding side by side pays
SIZES = {"1280x720": (1280, 720), "1920x1080": (1920, 1080), "1080x3000": (1080, 3000)}
QUICK_TEXT = dict(
    hidden_size=512, intermediate_size=1536, num_hidden_layers=6, num_attention_heads=8,
    num_key_value_heads=4, head_dim=64, max_position_embeddings=32768, rope_theta=5_000_000.0,
    rope_scaling={"rope_type": "default", "mrope_section": [12, 10, 10], "mrope_interleaved": True},
    tie_word_embeddings=True,
)  # fmt: skip
QUICK_VISION = dict(
    depth=6, hidden_size=256, intermediate_size=1024, num_heads=4, patch_size=16,
    spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=512,
    num_position_embeddings=2304, deepstack_visual_indexes=[1, 3, 5],
)  # fmt: skip


def document_screenshot(size: tuple[int, int], variant: int = 0):
    """A document-like screenshot: title bar, lines of an invoice (cost depends on size only;
    `variant` changes the numbers, so the embedding cache cannot recognise it)."""
    from PIL import Image, ImageDraw

    width, height = size
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 40), fill=(40, 70, 160))
    y = 60
    while y < height - 30:
        draw.text((40, y), f"Invoice {variant} line {y // 24}: widget x{y % 7} ...... "
                  f"{(y * 3 + variant * 11) % 997}.50 EUR", fill="black")  # fmt: skip
        y += 24
    return image


def peak_rss_gib() -> float:
    """This process's high-water RSS (VmHWM: unlike ru_maxrss it is not inherited over fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


# -- children: each runtime in its own process ----------------------------------------------------


def child_desklens(model: str, size: str, max_tokens: int | None, skip: bool = True) -> dict:
    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import EngineConfig, VLMEngine
    from desktop.core.images import load_image

    t0 = time.perf_counter()
    config = EngineConfig(skip_repeats=skip)
    if max_tokens:
        config.max_visual_tokens = max_tokens
    engine = VLMEngine.load(model, config)
    load_s = time.perf_counter() - t0
    image = load_image(document_screenshot(SIZES[size]))
    settings = GenerationSettings(max_new_tokens=NEW_TOKENS, ignore_eos=True)
    conversation = Conversation()
    first = engine.ask(conversation, "What is the total amount?", [image], settings)
    follow = engine.ask(conversation, "And the due date?", [], settings)
    seen = engine.ask(Conversation(), "Who is the customer?", [image], settings)
    assert first.ok and follow.ok and seen.ok, (first.error, follow.error, seen.error)
    return {
        "load_s": load_s,
        "visual_tokens": first.stats.visual_tokens,
        "visual_tokens_full": first.stats.visual_tokens_full,
        "input_tokens": first.stats.input_tokens,
        "ttft_s": first.stats.ttft_s,
        "vision_s": first.stats.vision_s,
        "prefill_s": first.stats.prefill_s,
        "decode_tps": first.stats.tokens_per_s,
        "followup_ttft_s": follow.stats.ttft_s,
        "followup_input_tokens": follow.stats.input_tokens,
        "seen_image_ttft_s": seen.stats.ttft_s,
        "seen_image_vision_s": seen.stats.vision_s,
        "peak_rss_gib": peak_rss_gib(),
    }


def child_batch(model: str, size: str, batch: int | None) -> dict:
    """N different screenshots, "extract the text" each: one by one, then side by side."""
    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import VLMEngine
    from desktop.core.images import load_image

    batch = batch or 4
    engine = VLMEngine.load(model)
    settings = GenerationSettings(max_new_tokens=BATCH_TOKENS, ignore_eos=True)
    question = "Extract all the text of this screenshot."
    images = [load_image(document_screenshot(SIZES[size], v)) for v in range(2 * batch)]
    start = time.perf_counter()
    for image in images[:batch]:  # new images each time: every one pays its vision encoder
        engine.reset()
        answer = engine.ask(Conversation(), question, [image], settings)
        assert answer.ok, answer.error
    one_by_one_s = time.perf_counter() - start
    start = time.perf_counter()
    answers = engine.ask_each([(question, [image]) for image in images[batch:]], settings)
    together_s = time.perf_counter() - start
    assert all(a.ok and a.stats.generated_tokens == BATCH_TOKENS for a in answers)
    return {
        "batch": batch,
        "one_by_one_s": one_by_one_s,
        "together_s": together_s,
        "vision_s": sum(a.stats.vision_s for a in answers),
        "prefill_s": answers[0].stats.prefill_s,
        "decode_tps": answers[0].stats.tokens_per_s * batch,
        "peak_rss_gib": peak_rss_gib(),
    }


def child_torch(checkpoint: str, size: str, max_tokens: int | None) -> dict:
    import torch
    from transformers import AutoProcessor, Qwen3VLForConditionalGeneration, TextStreamer

    torch.set_num_threads(os.cpu_count() or 1)
    t0 = time.perf_counter()
    model = Qwen3VLForConditionalGeneration.from_pretrained(checkpoint, dtype=torch.float32).eval()
    processor = AutoProcessor.from_pretrained(checkpoint)
    load_s = time.perf_counter() - t0
    image = document_screenshot(SIZES[size])
    question = {"type": "text", "text": "What is the total amount?"}
    messages = [{"role": "user", "content": [{"type": "image"}, question]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
    kwargs = {}
    if max_tokens:
        kwargs["images_kwargs"] = {"max_pixels": max_tokens * 32 * 32}
    inputs = processor(text=[prompt], images=[image], return_tensors="pt", **kwargs)
    vision = {"s": 0.0}
    original = model.model.get_image_features

    def timed(*a, **k):
        start = time.perf_counter()
        out = original(*a, **k)
        vision["s"] += time.perf_counter() - start
        return out

    model.model.get_image_features = timed
    marks: list[float] = []

    class Clock(TextStreamer):
        def put(self, value):
            marks.append(time.perf_counter())

        def end(self):
            pass

    start = time.perf_counter()
    with torch.no_grad():
        model.generate(**inputs, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                       do_sample=False, streamer=Clock(processor.tokenizer))  # fmt: skip
    first_token = marks[1] - start  # marks[0] is the prompt itself
    decode = (len(marks) - 2) / (marks[-1] - marks[1])
    return {
        "load_s": load_s,
        "visual_tokens": int(inputs["image_grid_thw"].prod()) // 4,
        "input_tokens": int(inputs["input_ids"].shape[1]),
        "ttft_s": first_token,
        "vision_s": vision["s"],
        "prefill_s": first_token - vision["s"],
        "decode_tps": decode,
        "peak_rss_gib": peak_rss_gib(),
    }


def child_genai(model: str, size: str, max_tokens: int | None) -> dict:
    import numpy as np
    import openvino as ov
    import openvino_genai as ov_genai

    t0 = time.perf_counter()
    pipe = ov_genai.VLMPipeline(model, "CPU")
    load_s = time.perf_counter() - t0
    image = ov.Tensor(np.array(document_screenshot(SIZES[size]))[None])
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = NEW_TOKENS
    config.min_new_tokens = NEW_TOKENS
    history = ov_genai.ChatHistory()
    history.append({"role": "user", "content": "What is the total amount?"})
    first = pipe.generate(history, images=[image], generation_config=config)
    history.append({"role": "assistant", "content": first.texts[0]})
    history.append({"role": "user", "content": "And the due date?"})
    follow = pipe.generate(history, generation_config=config)
    m, f = first.perf_metrics, follow.perf_metrics
    return {
        "load_s": load_s,
        "ttft_s": m.get_ttft().mean / 1000,
        "decode_tps": 1000 / m.get_tpot().mean,
        "followup_ttft_s": f.get_ttft().mean / 1000,
        "peak_rss_gib": peak_rss_gib(),
    }


def _budget_arg(child):
    """The children take (target, size, budget); on the command line 0 stands for None."""
    return lambda target, size, budget: child(target, size, int(budget) or None)


CHILDREN = {
    name: _budget_arg(child)
    for name, child in (("torch", child_torch), ("genai", child_genai), ("batch", child_batch))
}
# DeskLens with pruning ("skip repeated areas") on (1, the default) or off (0)
CHILDREN["desklens"] = lambda target, size, budget, skip="1": child_desklens(
    target, size, int(budget) or None, skip == "1"
)


def run_child(kind: str, target: str, size: str, max_tokens: int | None, *more: object) -> dict:
    return children.run_child(__file__, kind, target, size, max_tokens or 0, *more)


# -- machine floors -------------------------------------------------------------------------------


def memory_bandwidth_gbs(gib: float = 1.0) -> float:
    import numpy as np

    src = np.ones(int(gib * 2**30) // 8, dtype=np.float64)
    dst = np.empty_like(src)
    best = 0.0
    for _ in range(3):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = max(best, 2 * src.nbytes / (time.perf_counter() - start) / 1e9)  # read + write
    return best


def gemm_gflops() -> float:
    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops

    n = 2048
    a = ops.parameter([n, n], ov.Type.f32)
    model = ov.Model([ops.matmul(a, ops.constant(np.ones((n, n), np.float32)), False, False)], [a])
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    x = np.random.default_rng(0).random((n, n), dtype=np.float32)
    compiled(x)
    start = time.perf_counter()
    for _ in range(5):
        compiled(x)
    return 5 * 2 * n**3 / (time.perf_counter() - start) / 1e9


# -- orchestration --------------------------------------------------------------------------------


def prepare_models(cache: Path, quick: bool) -> tuple[Path, Path]:
    from devkit.model_factory import REAL_2B_TEXT, REAL_2B_VISION, build_checkpoint

    name = "quick" if quick else "qwen3-vl-2b-shape"
    checkpoint = cache / f"{name}-checkpoint"
    if not (checkpoint / "config.json").is_file():
        print(f"building random checkpoint {checkpoint} ...", flush=True)
        text, vision = (QUICK_TEXT, QUICK_VISION) if quick else (REAL_2B_TEXT, REAL_2B_VISION)
        build_checkpoint(checkpoint, text=text, vision=vision)
    ir = cache / f"{name}-int8"
    if not (ir / "desklens.json").is_file():
        print(f"converting to {ir} with convert.py ...", flush=True)
        subprocess.run([sys.executable, str(ROOT / "convert.py"), "--model", str(checkpoint),
                        "--output", str(ir), "--force"], check=True)  # fmt: skip
    return checkpoint, ir


def fmt(value, unit="s", digits=1) -> str:
    return "–" if value is None else f"{value:.{digits}f} {unit}".strip()


def main() -> int:
    if children.child_main(CHILDREN):
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small random model, minutes")
    parser.add_argument("--cache", type=Path, default=smoke.CACHE)
    parser.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--no-genai", action="store_true", help="skip the VLMPipeline reference")
    parser.add_argument("--batch", type=int, default=4, help="screenshots extracted together")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "RESULTS.md")
    smoke.add_smoke_options(parser, model=True)
    args = parser.parse_args()
    checkpoint, ir = smoke.models(args, parser, prepare_models)
    if args.smoke:  # one size, no VLMPipeline, two screenshots side by side
        args.sizes, args.no_genai, args.batch = ["1280x720"], True, 2

    bandwidth, gflops = memory_bandwidth_gbs(0.0625 if args.smoke else 1.0), gemm_gflops()
    lm_bytes = (ir / "openvino_language_model.bin").stat().st_size
    decode_floor = bandwidth * 1e9 / lm_bytes
    print(
        f"machine: {bandwidth:.1f} GB/s copy bandwidth, {gflops:.0f} GFLOP/s f32 GEMM; INT8 LM "
        f"weights {lm_bytes / 1e9:.2f} GB -> decode floor {decode_floor:.1f} tok/s"
    )

    rows = []
    for size in args.sizes:
        torch_full = run_child("torch", str(checkpoint), size, None)
        ours_default = run_child("desklens", str(ir), size, None)
        ours_no_skip = run_child("desklens", str(ir), size, None, 0)
        ours_full = run_child("desklens", str(ir), size, 16384)
        ours_fast = run_child("desklens", str(ir), size, FAST_BUDGET)
        genai = {} if args.no_genai else run_child("genai", str(ir), size, None)
        rows.append((size, torch_full, ours_default, ours_no_skip, ours_full, ours_fast, genai))
        print(json.dumps({"size": size, "torch": torch_full, "desklens": ours_default,
                          "desklens_no_skip": ours_no_skip, "desklens_full_res": ours_full,
                          "desklens_fast": ours_fast, "genai": genai}), flush=True)  # fmt: skip
    batch = run_child("batch", str(ir), args.sizes[0], args.batch)
    print(json.dumps({"batch": batch}), flush=True)

    flag = " --smoke" if args.smoke else " --quick" if args.quick else ""
    model = "tiny test model" if args.smoke else "small random model" if args.quick else (
        "Qwen3-VL-2B shape, random weights")  # fmt: skip
    lines = [
        "## VLM: DeskLens engine vs PyTorch fp32 (and VLMPipeline)",
        "",
        f"Command: `python bench/vlm_bench.py{flag}` ({model}, INT8 IR, {os.cpu_count()} cores, "
        f"{NEW_TOKENS} new tokens, single runs). DeskLens skips repeated areas by default "
        "(visual tokens: kept of all).",
        "",
        f"Machine: {bandwidth:.1f} GB/s copy bandwidth, {gflops:.0f} GFLOP/s f32 GEMM "
        f"(OpenVINO); INT8 LM weights {lm_bytes / 1e9:.2f} GB read per token -> decode floor "
        f"{decode_floor:.1f} tok/s.",
        "",
        "| image | runtime | visual tokens | load | TTFT | vision | prefill | decode | "
        "follow-up TTFT | seen image TTFT | peak RSS |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines += size_lines(*row, decode_floor)
    lines += ["", *batch_lines(batch, args.sizes[0])]
    if not args.smoke:
        write_section("## VLM:", "\n".join(lines), args.out)
    print("\n".join(lines))
    return 0


def size_lines(size, t, d, n, f, q, g, decode_floor) -> list[str]:
    lines = []
    for label, r in (("PyTorch fp32 (full res)", t), ("DeskLens (default budget)", d),
                     ("DeskLens (default budget, skip repeats off)", n),
                     ("DeskLens (full res)", f), (f"DeskLens ({FAST_BUDGET} tokens)", q),
                     ("VLMPipeline (defaults)", g)):  # fmt: skip
        if not r:
            continue
        if "error" in r:
            lines.append(f"| {size} | {label} | error: {r['error']} |||||||||")
            continue
        tokens = r.get("visual_tokens", "–")
        if r.get("visual_tokens_full", tokens) != tokens:
            tokens = f"{tokens} of {r['visual_tokens_full']}"
        lines.append(
            f"| {size} | {label} | {tokens} | {fmt(r.get('load_s'))} | "
            f"{fmt(r.get('ttft_s'))} | {fmt(r.get('vision_s'))} | {fmt(r.get('prefill_s'))} | "
            f"{fmt(r.get('decode_tps'), 'tok/s')} | {fmt(r.get('followup_ttft_s'), 's', 2)} | "
            f"{fmt(r.get('seen_image_ttft_s'), 's', 2)} | "
            f"{fmt(r.get('peak_rss_gib'), 'GiB', 2)} |"
        )
    if not any("error" in r for r in (t, d, n, f)):
        lines.append(
            f"| {size} | **ratios** | | | full res {f['ttft_s'] / t['ttft_s']:.2f}x, "
            f"default {d['ttft_s'] / t['ttft_s']:.2f}x (skip repeats off "
            f"{n['ttft_s'] / t['ttft_s']:.2f}x), {FAST_BUDGET} tokens "
            f"{q.get('ttft_s', float('nan')) / t['ttft_s']:.2f}x PyTorch | | | "
            f"{d['decode_tps'] / t['decode_tps']:.1f}x PyTorch, "
            f"{d['decode_tps'] / decode_floor:.0%} of floor | "
            f"{d['followup_ttft_s'] / d['ttft_s']:.1%} of first | "
            f"vision {d['seen_image_vision_s']:.3f} s | |"
        )
    return lines


def batch_lines(r: dict, size: str) -> list[str]:
    if "error" in r:
        return [f"Batch: error: {r['error']}"]
    tokens = r["batch"] * BATCH_TOKENS
    return [
        f'Batch ({size}, {r["batch"]} different screenshots, "extract all the text", '
        f"{BATCH_TOKENS} new tokens each, DeskLens default budget):",
        "",
        "| mode | wall time | throughput | vision | prefill | decode | peak RSS |",
        "|---|---|---|---|---|---|---|",
        f"| one by one | {fmt(r['one_by_one_s'])} | "
        f"{fmt(tokens / r['one_by_one_s'], 'tok/s')} | | | | |",
        f"| side by side (`VLMEngine.ask_each`) | {fmt(r['together_s'])} | "
        f"{fmt(tokens / r['together_s'], 'tok/s')} | {fmt(r['vision_s'])} | "
        f"{fmt(r['prefill_s'])} | {fmt(r['decode_tps'], 'tok/s')} all rows | "
        f"{fmt(r['peak_rss_gib'], 'GiB', 2)} |",
        f"| **ratio** | | **{r['one_by_one_s'] / r['together_s']:.2f}x** | | | | |",
    ]


if __name__ == "__main__":
    sys.exit(main())
