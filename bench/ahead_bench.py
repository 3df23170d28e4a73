#!/usr/bin/env python3
"""Answer ahead: Send -> first token when the images were read while the question was typed.

    python bench/ahead_bench.py --write      # Qwen3-VL-2B shape, random weights (~15 min here)
    python bench/ahead_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR  # seconds

Same random-weight model of the real size as bench/vlm_bench.py (built once, cached). For each
screenshot size, in one process: today's path (attach, then Send at once, no preparation), and
`VLMEngine.prepare` started at attach with the question sent T seconds later (T = 0, 5, 15 s, and
once the preparation is ready), measuring Send -> first token. The typing time is a real wait:
that is what a person does. Also: the first question of a reopened two-turn chat with and
without background preparation, the preparation's own time split into vision and prefill,
prefill chunk sizes, peak RSS with and without preparation (each in its own process), the fast
OCR's time alone and while a preparation runs, and PyTorch fp32's TTFT at 1280x720 of the same
run (bench/vlm_bench.py's child) for the 0.05x target.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import children  # noqa: E402  (bench/ is on sys.path)
import smoke  # noqa: E402
import vlm_bench  # noqa: E402
from results import publish  # noqa: E402

HEADING = "## Answer ahead: reading images while the question is typed"
QUESTION = "What is the total amount?"
TYPING_S = (0.0, 5.0, 15.0)
SMOKE_TYPING_S = (0.0,)
CHUNKS = (64, 128, 256, 512, 0)  # 0: the whole prompt in one call
NEW_TOKENS = 8  # only the first token matters here


def _engine(model: str, **config):
    from desktop.core.engine import EngineConfig, VLMEngine

    return VLMEngine.load(model, EngineConfig(**config))


def _settings():
    from desktop.core.chat import GenerationSettings

    return GenerationSettings(max_new_tokens=NEW_TOKENS, ignore_eos=True)


def _image(size: str, variant: int):
    from desktop.core.images import load_image

    return load_image(vlm_bench.document_screenshot(vlm_bench.SIZES[size], variant))


def send_after(engine, image, typing_s: float | None) -> dict:
    """Attach (preparation starts), type for `typing_s` (None: until it is ready), then Send:
    cancel what is left of the preparation, ask. Times Send -> first token."""
    from desktop.core.chat import Conversation

    conversation, cancel, done = Conversation(), threading.Event(), {}
    worker = threading.Thread(
        target=lambda: done.update(p=engine.prepare(conversation, [image], _settings(), cancel))
    )
    attached = time.perf_counter()
    worker.start()
    if typing_s is None:
        worker.join()
    else:
        time.sleep(typing_s)  # the person typing: a real wait, not a stand-in for an event
    sent = time.perf_counter()
    cancel.set()
    worker.join()
    asked = time.perf_counter()
    answer = engine.ask(conversation, QUESTION, [image], _settings())
    assert answer.ok, answer.error
    prep = done["p"]
    return {
        "typing_s": sent - attached,
        "send_to_first_s": asked - sent + answer.stats.ttft_s,
        "prep_status": prep.status,
        "prep_vision_s": prep.stats.vision_s,
        "prep_prefill_s": prep.stats.prefill_s,
        "prep_total_s": prep.stats.total_s,
        "prep_tokens": prep.stats.input_tokens,
        "send_input_tokens": answer.stats.input_tokens,
    }


def child_ahead(model: str, size: str, typing: str = "") -> dict:
    """`typing`: the typing times, comma-separated ("" for TYPING_S)."""
    from desktop.core.chat import Conversation

    engine = _engine(model)
    variant = iter(range(100))
    today = engine.ask(Conversation(), QUESTION, [_image(size, next(variant))], _settings())
    stats = today.stats
    tokens = f"{stats.visual_tokens} of {stats.visual_tokens_full}"
    rows = {"today_ttft_s": stats.ttft_s, "today_vision_s": stats.vision_s,
            "today_prefill_s": stats.prefill_s, "visual_tokens": tokens}  # fmt: skip
    times = tuple(float(t) for t in typing.split(",")) if typing else TYPING_S
    for typing_s in (*times, None):
        engine.reset()
        rows[f"T={typing_s}"] = send_after(engine, _image(size, next(variant)), typing_s)
    return rows


def child_t0(model: str, size: str, repeat: str = "3") -> dict:
    """Send at once after attaching vs no preparation at all, interleaved: the vision call's
    time varies by tens of percent from run to run here, so one pair cannot tell 5 %."""
    from desktop.core.chat import Conversation

    engine = _engine(model)
    today, at_once = [], []
    for variant in range(int(repeat)):
        engine.reset()
        image = _image(size, 200 + 2 * variant)
        today.append(engine.ask(Conversation(), QUESTION, [image], _settings()).stats.ttft_s)
        engine.reset()
        at_once.append(send_after(engine, _image(size, 201 + 2 * variant), 0.0)["send_to_first_s"])
    return {"today_s": today, "at_once_s": at_once}


def child_reopened(model: str, size: str) -> dict:
    """A two-turn chat, then a restart (empty KV state and image cache): the first follow-up."""
    from desktop.core.chat import Conversation

    engine = _engine(model)
    result = {}
    for mode in ("cold", "prepared"):
        conversation = Conversation()
        image = _image(size, 50 if mode == "cold" else 51)
        engine.ask(conversation, QUESTION, [image], _settings())
        engine.ask(conversation, "And the due date?", [], _settings())
        engine.reset()
        engine.encoder._cache.clear()  # a new process remembers no image
        if mode == "prepared":
            prep = engine.prepare(conversation, [], _settings())
            result["prep_total_s"] = prep.stats.total_s
            result["prep_vision_s"] = prep.stats.vision_s
            result["history_tokens"] = prep.held_tokens
        answer = engine.ask(conversation, "Who is the customer?", [], _settings())
        result[f"{mode}_ttft_s"] = answer.stats.ttft_s
        result[f"{mode}_input_tokens"] = answer.stats.input_tokens
    return result


def child_chunks(model: str, size: str) -> dict:
    """The same prompt prefilled in chunks of each size (0: one call), image already encoded."""
    from desktop.core.chat import Conversation

    image, result = _image(size, 60), {}
    engine = _engine(model)
    for chunk in CHUNKS:
        engine.config.prefill_chunk_tokens = chunk or 1_000_000
        engine.reset()
        prep = engine.prepare(Conversation(), [image], _settings())
        result[str(chunk)] = prep.stats.prefill_s
        result["tokens"] = prep.held_tokens
    return result


def child_memory(model: str, size: str, mode: str) -> dict:
    """Peak RSS of one new-screenshot question, with (`ahead`) or without preparation."""
    from desktop.core.chat import Conversation

    engine = _engine(model)
    image, conversation = _image(size, 70), Conversation()
    if mode == "ahead":
        engine.prepare(conversation, [image], _settings())
    engine.ask(conversation, QUESTION, [image], _settings())
    return {"peak_rss_gib": vlm_bench.peak_rss_gib()}


def child_ocr(model: str, size: str) -> dict:
    """The fast OCR of a screenshot: alone; during a preparation's vision call (it cannot be
    cut); during its prefill, left running or cancelled as the OCR starts (the app's policy)."""
    from desktop.core.chat import Conversation
    from desktop.core.ocr import OcrEngine

    ocr, engine = OcrEngine(), _engine(model)
    ocr.warm_up()
    shot = vlm_bench.document_screenshot((1000, 760), 3)
    ocr.extract(shot)
    result = {"alone_s": _timed(lambda: ocr.extract(shot))}
    image = _image(size, 80)
    for case, cancel_it in (("during_vision_s", False), ("during_prefill_s", False),
                            ("prefill_cancelled_s", True)):  # fmt: skip
        engine.reset()  # after the first case the image is cached: only prefill is left
        cancel = threading.Event()
        worker = threading.Thread(
            target=lambda c=cancel: engine.prepare(Conversation(), [image], _settings(), c)
        )
        worker.start()
        time.sleep(0.5)  # the click comes while the preparation works
        if cancel_it:
            cancel.set()
        result[case] = _timed(lambda: ocr.extract(shot))
        cancel.set()
        worker.join()
    return result


def _timed(work) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


CHILDREN = {
    "ahead": child_ahead,
    "t0": child_t0,
    "reopened": child_reopened,
    "chunks": child_chunks,
    "memory": child_memory,
    "ocr": child_ocr,
}


def report(
    sizes: list[str], runs: dict, torch: dict, command: str, typing: tuple[float, ...] = TYPING_S
) -> str:
    typed = " | ".join(f"typed {t:g} s" for t in typing)
    lines = [
        HEADING,
        "",
        f"Command: `{command}` ({_model_words(command)}, INT8, {os.cpu_count()} "
        f"cores, default image budget, single runs, all measured end to end in one run). "
        "Send -> first token includes waiting for the cancelled preparation's current step.",
        "",
        f"| image | visual tokens (kept of all) | today (no preparation) | {typed} "
        "| typed until ready | preparation (vision + prefill) |",
        "|---|---|---|" + "---|" * len(typing) + "---|---|",
    ]
    for size in sizes:
        r = runs[size]["ahead"]
        if "error" in r:
            lines.append(f"| {size} | error: {r['error']} |||||||")
            continue
        ready = r["T=None"]
        cells = [f"{r[f'T={t}']['send_to_first_s']:.2f} s" for t in typing]
        cells.append(f"**{ready['send_to_first_s']:.2f} s** (typed {ready['typing_s']:.1f} s)")
        lines.append(
            f"| {size} | {r['visual_tokens']} | {r['today_ttft_s']:.2f} s | "
            + " | ".join(cells)
            + f" | {ready['prep_total_s']:.1f} s ({ready['prep_vision_s']:.1f} + "
            f"{ready['prep_prefill_s']:.1f} s, {ready['prep_tokens']} tokens) |"
        )
        t0 = r["T=0.0"]["send_to_first_s"] / r["today_ttft_s"]
        torch_cell = ""
        if size == "1280x720" and "ttft_s" in torch:
            torch_cell = f"; ready: {ready['send_to_first_s'] / torch['ttft_s']:.3f}x PyTorch fp32"
            torch_cell += f" ({torch['ttft_s']:.1f} s)"
        ready_ratio = ready["send_to_first_s"] / r["today_ttft_s"]
        lines.append(
            f"| {size} | **ratios** | | {t0:.2f}x today | "
            + "| " * (len(typing) - 1)
            + f"{ready_ratio:.3f}x today{torch_cell} | |"
        )
    lines += ["", "Reopened two-turn chat (restart: empty KV state, empty image cache), first "
              "follow-up question:", "", "| image | cold | with background preparation | "
              "preparation |", "|---|---|---|---|"]  # fmt: skip
    for size in sizes:
        r = runs[size]["reopened"]
        if "error" in r:
            lines.append(f"| {size} | error: {r['error']} | | |")
            continue
        lines.append(
            f"| {size} | {r['cold_ttft_s']:.2f} s ({r['cold_input_tokens']} tokens fed) | "
            f"**{r['prepared_ttft_s']:.2f} s** ({r['prepared_input_tokens']} tokens) | "
            f"{r['prep_total_s']:.1f} s ({r['history_tokens']} tokens, vision "
            f"{r['prep_vision_s']:.1f} s) |"
        )
    lines += ["", *_chunk_lines(runs[sizes[0]]["chunks"], sizes[0])]
    lines += ["", *_other_lines(runs[sizes[0]], sizes[0])]
    return "\n".join(lines)


def _model_words(command: str) -> str:
    return "tiny test model" if "--smoke" in command else "Qwen3-VL-2B shape, random weights"


def _chunk_lines(r: dict, size: str) -> list[str]:
    if "error" in r:
        return [f"Prefill chunks: error: {r['error']}"]
    cells = " | ".join(f"{r[str(c)]:.2f} s" for c in CHUNKS)
    heads = " | ".join(f"{c} tokens" if c else "one call" for c in CHUNKS)
    return [f"Prefill of the {r['tokens']}-token prompt at {size} by chunk size "
            "(the chunk is the longest a cancel waits in prefill):", "",
            f"| {heads} |", "|" + "---|" * len(CHUNKS), f"| {cells} |"]  # fmt: skip


def _other_lines(r: dict, size: str) -> list[str]:
    memory, ocr = r["memory"], r["ocr"]
    lines = []
    if "error" not in memory.get("plain", {}) and "error" not in memory.get("ahead", {}):
        lines.append(f"Peak RSS at {size}: {memory['plain']['peak_rss_gib']:.2f} GiB without "
                     f"preparation, {memory['ahead']['peak_rss_gib']:.2f} GiB with it "
                     "(each in its own process).")  # fmt: skip
    if "error" not in ocr:
        lines.append(
            f"Fast OCR of a 1000x760 screenshot: {ocr['alone_s']:.2f} s alone, "
            f"{ocr['during_vision_s']:.2f} s during a preparation's vision call (which cannot be "
            f"cut), {ocr['during_prefill_s']:.2f} s during its prefill left running, "
            f"{ocr['prefill_cancelled_s']:.2f} s when the click cancels the preparation (the "
            "app's policy: the current chunk finishes, then the OCR has both cores)."
        )
    return lines


def main() -> int:
    if children.child_main(CHILDREN):
        return 0
    parser = smoke.model_bench_parser(__doc__)
    parser.add_argument("--sizes", nargs="*", default=["1280x720", "1920x1080"])
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch's reference TTFT")
    args = parser.parse_args()
    checkpoint, ir = smoke.models(args, parser, vlm_bench.prepare_models)
    typing = SMOKE_TYPING_S if args.smoke else TYPING_S
    if args.smoke:
        args.sizes = args.sizes[:1]
    runs: dict = {}
    for index, size in enumerate(args.sizes):
        runs[size] = {
            kind: children.run_child(__file__, kind, ir, size)
            for kind in ("reopened", *(("chunks", "ocr") if index == 0 else ()))
        }
        runs[size]["ahead"] = children.run_child(
            __file__, "ahead", ir, size, ",".join(map(str, typing))
        )
        if index == 0:
            runs[size]["memory"] = {
                mode: children.run_child(__file__, "memory", ir, size, mode)
                for mode in ("plain", "ahead")
            }
        print(size, runs[size], flush=True)
    torch = {}
    if not args.no_torch and "1280x720" in args.sizes:
        torch = children.run_child(vlm_bench.__file__, "torch", checkpoint, "1280x720", 0)
        print("torch", torch, flush=True)
    command = "python bench/ahead_bench.py" + (" --smoke" if args.smoke else "")
    command += " --write" if args.write else ""
    text = report(args.sizes, runs, torch, command, typing)
    publish(HEADING, text, args.write and not args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
