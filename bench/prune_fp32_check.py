#!/usr/bin/env python3
"""The engine against transformers at the published shape, fp32, pruning off and on.

    python bench/prune_fp32_check.py --write   # Qwen3-VL-2B shape, random weights (~20 GB RAM)
    python bench/prune_fp32_check.py --smoke --smoke-model DIR --smoke-checkpoint DIR

The exactness tests compare with transformers on the tiny model; this closes the gap at the real
shape: the random-weight checkpoint of bench/vlm_bench.py is converted at fp32 (convert.py
--weight-format fp32, cached), DeskLens answers a 1280x720 document screenshot greedily with f32
inference, and transformers fp32 answers the same prompt: with pruning off its own `generate`;
with pruning on PixelPrune applied the reference's way (devkit/pruned_reference.py). Reported:
how many of the greedy tokens are equal before the first difference, and the largest difference
of the prefill logits. Each side runs in its own process (the two fp32 models need ~10 GB each).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import children  # noqa: E402  (bench/ is on sys.path)
import smoke  # noqa: E402
import vlm_bench  # noqa: E402
from results import publish  # noqa: E402

HEADING = "## The engine vs transformers at the 2B shape, fp32, pruning off and on"
QUESTION = "What is the total amount?"
NEW_TOKENS = 32
SIZE = (1280, 720)


def child_engine(model: str, skip: str, out: str) -> dict:
    """DeskLens, f32 throughout: the answer's ids, the prompt as fed and its prefill logits."""
    import numpy as np

    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import EngineConfig, VLMEngine
    from desktop.core.images import load_image
    from devkit.tiny_models import EXACT

    engine = VLMEngine.load(model, EngineConfig(**EXACT, skip_repeats=skip == "1"))
    conversation = Conversation()
    image = load_image(vlm_bench.document_screenshot(SIZE))
    settings = GenerationSettings(max_new_tokens=NEW_TOKENS, ignore_eos=True, draft=False)
    answer = engine.ask(conversation, QUESTION, [image], settings)
    assert answer.ok, answer.error
    seq = engine.last_sequence
    np.savez(out, ids=np.asarray(seq.ids), answer=np.asarray(conversation.turns[0].answer_ids),
             logits=engine.last_prefill_logits,
             positions=seq.position_array(0, len(seq)))  # fmt: skip
    return {"kept": answer.stats.visual_tokens, "full": answer.stats.visual_tokens_full}


def child_reference(checkpoint: str, model: str, skip: str, out: str) -> dict:
    """transformers fp32 on the same prompt; compared with what the engine child saved."""
    import numpy as np
    import torch
    from transformers import Qwen3VLForConditionalGeneration

    from desktop.core.bounded_json import read_json
    from desktop.core.engine import EngineConfig
    from desktop.core.engine.config import read_vision_spec
    from desktop.core.engine.vision import prepare_image
    from devkit.pruned_reference import full_prompt, generate_pruned

    saved = np.load(out)
    folder = Path(model)
    spec = read_vision_spec(folder, read_json(folder / "config.json")["vision_config"],
                            EngineConfig())  # fmt: skip
    prepared = [prepare_image(vlm_bench.document_screenshot(SIZE), spec)]
    hf = Qwen3VLForConditionalGeneration.from_pretrained(checkpoint, dtype=torch.float32).eval()
    ids = saved["ids"].tolist()
    pad = hf.config.image_token_id
    if skip == "1":
        full = full_prompt(ids, pad, prepared)
        tokens, logits, pruned_ids, positions = generate_pruned(
            hf, full, prepared, NEW_TOKENS, eos=-1
        )
        same_prompt = pruned_ids == ids and np.array_equal(positions, saved["positions"])
    else:
        tokens, logits = _generate(hf, ids, prepared)
        same_prompt = True
    answer = saved["answer"].tolist()
    equal = next((i for i, (a, b) in enumerate(zip(answer, tokens, strict=False)) if a != b),
                 min(len(answer), len(tokens)))  # fmt: skip
    diff = float(np.abs(saved["logits"] - logits).max())
    return {"equal_tokens": equal, "of": len(answer), "max_logit_diff": diff,
            "logit_range": float(np.ptp(logits)), "same_prompt": bool(same_prompt)}  # fmt: skip


def _generate(hf, ids: list[int], prepared: list) -> tuple[list[int], object]:
    """transformers' own greedy generate (no pruning) on the ids DeskLens fed."""
    import numpy as np
    import torch

    pixels = torch.from_numpy(np.concatenate([p.pixel_patches for p in prepared]))
    grid = torch.tensor([list(p.grid) for p in prepared])
    input_ids = torch.tensor([ids])
    kwargs = dict(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                  pixel_values=pixels, image_grid_thw=grid)  # fmt: skip
    with torch.no_grad():
        logits = hf(**kwargs).logits[0, -1].numpy()
        out = hf.generate(**kwargs, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS,
                          do_sample=False)  # fmt: skip
    return out[0, len(ids) :].tolist(), logits


CHILDREN = {"engine": child_engine, "reference": child_reference}


def fp32_model(cache: Path, checkpoint: Path) -> Path:
    target = cache / "qwen3-vl-2b-shape-fp32"
    if not (target / "desklens.json").is_file():
        print(f"converting to {target} (fp32) with convert.py ...", flush=True)
        subprocess.run([sys.executable, str(ROOT / "convert.py"), "--model", str(checkpoint),
                        "--weight-format", "fp32", "--output", str(target), "--force"],
                       check=True)  # fmt: skip
    return target


def main() -> int:
    if children.child_main(CHILDREN):
        return 0
    parser = smoke.model_bench_parser(__doc__)
    args = parser.parse_args()
    checkpoint, model = smoke.models(args, parser, vlm_bench.prepare_models)
    if not args.smoke:
        model = fp32_model(args.cache, checkpoint)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for skip in ("0", "1"):
            out = str(Path(tmp) / f"engine-{skip}.npz")
            ours = children.run_child(__file__, "engine", model, skip, out)
            theirs = {}
            if "error" not in ours:
                theirs = children.run_child(__file__, "reference", checkpoint, model, skip, out)
            rows[skip] = {**ours, **theirs}
            print(skip, rows[skip], flush=True)
    weights = "tiny test model as given" if args.smoke else "Qwen3-VL-2B shape, random, fp32 IR"
    command = "python bench/prune_fp32_check.py" + (" --smoke" if args.smoke else "")
    lines = [
        HEADING, "",
        f"Command: `{command}{' --write' if args.write else ''}` ({weights}; DeskLens with f32 "
        f"inference and f32 KV cache; transformers fp32; a {SIZE[0]}x{SIZE[1]} document "
        f"screenshot, {NEW_TOKENS} greedy tokens).", "",
        "| pruning | image tokens | same prompt and positions | greedy tokens equal | "
        "max prefill logit difference | logit range |",
        "|---|---|---|---|---|---|",
    ]  # fmt: skip
    for skip, r in rows.items():
        label = "on" if skip == "1" else "off"
        if "error" in r:
            lines.append(f"| {label} | error: {r['error']} | | | | |")
            continue
        lines.append(
            f"| {label} | {r['kept']} of {r['full']} | {'yes' if r['same_prompt'] else 'NO'} | "
            f"{r['equal_tokens']} of {r['of']} | {r['max_logit_diff']:.2e} | "
            f"{r['logit_range']:.2f} |"
        )
    publish(HEADING, "\n".join(lines), args.write and not args.smoke)
    return 0


if __name__ == "__main__":
    sys.exit(main())
