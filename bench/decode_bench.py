#!/usr/bin/env python3
"""Drafted decoding: what a verification call costs, how rejected drafts leave the KV state,
and decode speed end to end with no drafts, always-wrong drafts and always-right drafts.

    python bench/decode_bench.py --write     # Qwen3-VL-2B shape, random weights (~10 min here)
    python bench/decode_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR  # seconds

Same random-weight model of the real size as bench/vlm_bench.py. Random weights cannot write a
real answer, so acceptance on real text is measured by bench/draft_bench.py (OCR drafts against
the exact text of rendered screenshots); this bench writes the measured call costs to
bench/verify_costs.json for it (`--costs`), and the effective speed there is computed from
these measured parts. Here, measured end to end: plain decoding, the real drafter with every
proposed token spoiled (zero acceptance: the overhead), and drafts that are always right
(the ceiling for each k).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import children  # noqa: E402  (bench/ is on sys.path)
import smoke  # noqa: E402
import vlm_bench  # noqa: E402
from results import publish  # noqa: E402

HEADING = "## Drafted decoding: verification cost and end-to-end decode speed"
COSTS = Path(__file__).resolve().parent / "verify_costs.json"
FED = (1, 2, 4, 8, 16, 32)
CONTEXTS = (1000, 3000)
REPEAT = 7
NEW_TOKENS = 128
PERFECT_K = (4, 8, 16)


def _load(model: str):
    from desktop.core.engine import VLMEngine

    return VLMEngine.load(model)


def _feed_random(engine, count: int, position: int, logits: int = 1):
    import numpy as np

    ids = np.random.default_rng(position).integers(1000, 100_000, count)
    embeds = np.array(engine.prompts.embed_ids(ids[None])[0])
    positions = np.broadcast_to(np.arange(position, position + count), (3, count))
    return engine.language.feed(embeds, positions, logits=logits)


def _context(engine, length: int) -> None:
    engine.reset()
    for start in range(0, length, 256):
        _feed_random(engine, min(256, length - start), start)


def _ms(work, repeat: int = REPEAT, after=None) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
        if after is not None:
            after()
    return 1000 * statistics.median(times)


def child_verify(model: str, contexts: str = "") -> dict:
    """ms per language-model call feeding n tokens (logits for all n) at each context; then
    what a rejection costs when cut from the state vs masked out, at 2,000 tokens.
    `contexts`: comma-separated lengths ("" for CONTEXTS)."""
    engine = _load(model)
    language = engine.language
    costs: dict = {}
    for length in tuple(int(c) for c in contexts.split(",")) if contexts else CONTEXTS:
        _context(engine, length)
        costs[str(length)] = {
            str(n): _ms(
                lambda n=n, at=length: _feed_random(engine, n, at, logits=n),
                after=lambda at=length: language.truncate(at),
            )
            for n in FED
        }
    _context(engine, 2000)
    cut = []
    for _ in range(REPEAT):
        _feed_random(engine, 5, 2000, 5)  # the last token and 4 drafts, 4 of them rejected
        start = time.perf_counter()
        language.truncate(2001)
        cut.append(1000 * (time.perf_counter() - start))
        language.truncate(2000)
    cut = statistics.median(cut)
    masked = _ms(lambda: language.discard(4), after=lambda: language._valid.fill(1))
    # A decode step over the same 2,256 held positions, all attended vs 256 of them masked out
    # (what ~100 rejected drafts leave behind): does a mask with holes cost the attention more?
    _feed_random(engine, 256, 2000)
    steps = {}
    for label, holes in (("clean", 0), ("masked", 256), ("clean2", 0)):
        language._valid[2000:2256] = 0 if holes else 1
        steps[label] = _ms(
            lambda: _feed_random(engine, 1, 2256), after=lambda: language.truncate(2256)
        )
    step_clean = (steps["clean"] + steps["clean2"]) / 2
    step_masked = steps["masked"]
    language.discard(256)
    compact = _ms(language.compact, repeat=1)
    return {"costs": costs, "cut_ms": cut, "mask_ms": masked, "step_clean_ms": step_clean,
            "step_256_masked_ms": step_masked, "compact_ms": compact}  # fmt: skip


class SpoiledDrafts:
    """The real drafter, with every proposed token replaced by a wrong one: it proposes as
    often and as long as its own rule says, and nothing is ever accepted."""

    def __init__(self, real, vocab: int):
        self.real, self.vocab, self.stats = real, vocab, real.stats

    def propose(self, answer_ids):
        return [(token + 7919) % self.vocab for token in self.real.propose(answer_ids)]

    def record(self, drafted: int, accepted: int) -> None:
        self.real.record(drafted, accepted)
        self.stats = self.real.stats


class RightDrafts:
    """Always k right tokens (from the plain answer): the ceiling of drafted decoding."""

    def __init__(self, truth: list[int], k: int):
        from desktop.core.engine.drafting import DraftStats

        self.truth, self.k, self.stats = truth, k, DraftStats()

    def propose(self, answer_ids):
        return self.truth[len(answer_ids) : len(answer_ids) + self.k]

    def record(self, drafted: int, accepted: int) -> None:
        self.stats.drafted += drafted
        self.stats.accepted += accepted


def child_e2e(model: str, size: str, rounds: str = "2") -> dict:
    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.images import load_image

    engine = _load(model)
    image = load_image(vlm_bench.document_screenshot(vlm_bench.SIZES[size]))
    plain_settings = GenerationSettings(max_new_tokens=NEW_TOKENS, ignore_eos=True, draft=False)
    question = "Extract all the text of this screenshot."

    def run(drafter=None) -> dict:
        engine.reset()
        if drafter is not None:
            real = engine._drafter
            engine._drafter = lambda seq, hints, s: drafter(real(seq, hints, s))
        settings = GenerationSettings(max_new_tokens=NEW_TOKENS, ignore_eos=True)
        try:
            conversation = Conversation()
            answer = engine.ask(conversation, question, [image], settings if drafter else
                                plain_settings)  # fmt: skip
        finally:
            engine.__dict__.pop("_drafter", None)
        assert answer.ok, answer.error
        stats = answer.stats
        return {"tps": stats.tokens_per_s, "ids": conversation.turns[-1].answer_ids,
                "drafted": stats.drafted_tokens, "accepted": stats.accepted_tokens}  # fmt: skip

    run()  # warm: vision cached, weights hot
    plain = run()
    vocab = engine.last_prefill_logits.shape[0]
    modes = {"plain": lambda: run(), "spoiled": lambda: run(lambda r: SpoiledDrafts(r, vocab))}
    for k in PERFECT_K:
        modes[f"right k={k}"] = lambda k=k: run(lambda r: RightDrafts(plain["ids"], k))
    results: dict = {name: [] for name in modes}
    for _ in range(int(rounds)):  # interleaved: drift in the machine hits every mode alike
        for name, work in modes.items():
            results[name].append(work())
    summary = {}
    for name, runs in results.items():
        last = runs[-1]
        same = min(_same_prefix(r["ids"], plain["ids"]) for r in runs)
        summary[name] = {"tps": statistics.median(r["tps"] for r in runs),
                         "drafted": last["drafted"], "accepted": last["accepted"],
                         "same_prefix": same}  # fmt: skip
    return summary


def _same_prefix(a: list[int], b: list[int]) -> int:
    """How many leading tokens two answers share (INT8 / bf16 kernels round a k-row call
    differently from a 1-row one, so near-ties of random weights can flip)."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


CHILDREN = {"verify": child_verify, "e2e": child_e2e}


def report(verify: dict, e2e: dict, genai: dict, floor: float, size: str, command: str) -> str:
    smoked = "--smoke" in command
    model_words = "tiny test model" if smoked else "Qwen3-VL-2B shape, random weights"
    lines = [
        HEADING,
        "",
        f"Command: `{command}` ({model_words}, INT8, {os.cpu_count()} cores, "
        f"one run). INT8 decode floor of this machine: {floor:.1f} tok/s.",
        "",
    ]
    if "error" in verify:
        lines.append(f"Verification: error: {verify['error']}")
    else:
        heads = " | ".join(f"{n} fed" for n in FED)
        lines += [
            "Measured: ms per language-model call feeding n tokens with logits for all n "
            f"(median of {REPEAT}):",
            "",
            f"| context | {heads} | {FED[-1]} fed / 1 fed |",
            "|---|" + "---|" * (len(FED) + 1),
        ]
        for length, row in verify["costs"].items():
            cells = " | ".join(f"{row[str(n)]:.1f}" for n in FED)
            lines.append(f"| {length} | {cells} | {row[str(FED[-1])] / row['1']:.2f}x |")
        lines += [
            "",
            f"Rejected drafts at a 2,000-token context: cutting them from the state costs "
            f"{verify['cut_ms']:.1f} ms per rejection (a copy of the cache); masking them out "
            f"costs {verify['mask_ms']:.3f} ms, and a decode step over 2,256 held positions "
            f"takes {verify['step_256_masked_ms']:.1f} ms with 256 of them masked vs "
            f"{verify['step_clean_ms']:.1f} ms with none; removing masked positions from the "
            f"cache in one copy costs {verify['compact_ms']:.0f} ms.",
        ]
    lines += ["", f"Measured end to end ({size} screenshot, {NEW_TOKENS} new tokens, greedy, "
              "median of 2 interleaved runs; tokens equal to plain decoding's answer before the "
              "first difference, of " + str(NEW_TOKENS) + "):", "",
              "| mode | decode | vs plain | of floor | drafted / accepted | same as plain |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    if "error" in e2e:
        lines.append(f"| error: {e2e['error']} | | | | | |")
        return "\n".join(lines)
    plain = e2e["plain"]["tps"]
    labels = {"plain": "plain (no drafts)", "spoiled": "real drafter, every draft wrong"}
    for name, r in e2e.items():
        label = labels.get(name, f"always-right drafts, {name.split()[-1]}")
        lines.append(f"| {label} | {r['tps']:.1f} tok/s | {r['tps'] / plain:.2f}x | "
                     f"{r['tps'] / floor:.0%} | {r['drafted']} / {r['accepted']} | "
                     f"{r['same_prefix']} |")  # fmt: skip
    if "decode_tps" in genai:
        tps = genai["decode_tps"]
        lines.append(f"| VLMPipeline ({vlm_bench.NEW_TOKENS} tokens) | {tps:.1f} tok/s | "
                     f"{tps / plain:.2f}x | {tps / floor:.0%} | | |")  # fmt: skip
    return "\n".join(lines)


def main() -> int:
    if children.child_main(CHILDREN):
        return 0
    parser = smoke.model_bench_parser(__doc__)
    parser.add_argument("--size", default="1280x720", choices=list(vlm_bench.SIZES))
    args = parser.parse_args()
    _, ir = smoke.models(args, parser, vlm_bench.prepare_models)
    gib = 0.0625 if args.smoke else 1.0
    floor = (
        vlm_bench.memory_bandwidth_gbs(gib)
        * 1e9
        / (ir / "openvino_language_model.bin").stat().st_size
    )
    # Smoke: one short context, one round, no VLMPipeline; verify_costs.json stays as it is.
    verify = children.run_child(__file__, "verify", ir, "300" if args.smoke else "")
    print("verify", verify, flush=True)
    e2e = children.run_child(__file__, "e2e", ir, args.size, 1 if args.smoke else 2)
    print("e2e", e2e, flush=True)
    genai = {} if args.smoke else children.run_child(vlm_bench.__file__, "genai", ir, args.size, 0)
    print("genai", genai, flush=True)
    if "costs" in verify and not args.smoke:
        COSTS.write_text(json.dumps(verify["costs"]["1000"], indent=1) + "\n")
    command = "python bench/decode_bench.py" + (" --smoke" if args.smoke else "")
    command += " --write" if args.write else ""
    text = report(verify, e2e, genai, floor, args.size, command)
    publish(HEADING, text, args.write and not args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
