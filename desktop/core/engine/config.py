"""What an engine is loaded with and what it reports: configuration, model facts, preparations."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from desktop.core.bounded_json import read_json_object
from desktop.core.engine.vision import VisionSpec

# One visual token is 32x32 px. 1,280 tokens (~1.3 MP) keeps a 1280x720 screenshot at full
# resolution and is the top of the range Qwen recommends for document reading; users can raise it.
DEFAULT_MAX_VISUAL_TOKENS = 1280
# A preparation feeds its prefill in chunks of this many tokens, so that a cancel waits for one
# chunk at most. Measured on the 2B shape (bench/RESULTS.md, 887-token prompt at 1280x720):
# one call 5.6 s, 512-token chunks 7.9 s, 256 10.3 s, 64 11.4 s: every chunk after the first is
# fed over a held cache at about half the speed. So the first 1,024 tokens (a
# 1280x720 screenshot's whole prompt) go in one call; `ask` feeds its prompt in one call.
PREFILL_CHUNK_TOKENS = 1024


@dataclass
class EngineConfig:
    device: str = "CPU"
    threads: int | None = None
    max_visual_tokens: int = DEFAULT_MAX_VISUAL_TOKENS  # per image
    min_visual_tokens: int | None = None  # None: the model's own minimum (Qwen3-VL: 64)
    max_context_tokens: int = 16384
    prefill_chunk_tokens: int = PREFILL_CHUNK_TOKENS
    image_cache_size: int = 32
    # None: the device default (bf16 on CPUs with AMX/AVX512-BF16); "f32" for exact results.
    # It applies to every sub-model; the two below to one part each and come first.
    inference_precision: str | None = None
    # The vision encoder's and the language model's precisions. None (with tune_precision):
    # chosen on the CPU by measurement at first load (tuning.py: on a Xeon with AMX bf16 made
    # the vision encoder 1.5x faster, on an AVX512-BF16 CPU without AMX 23 % slower; the
    # language model's default bf16 decoded 1.5x slower than f32 with AMX). None without
    # tuning: the vision encoder f32, the language model the device default (as before).
    vision_precision: str | None = None
    language_precision: str | None = None
    tune_precision: bool = True
    language_properties: dict = field(default_factory=dict)
    vision_properties: dict = field(default_factory=dict)
    # CPU: activations of the INT8 layers are quantised on the fly in groups of this many
    # channels. Measured on the 2B shape (bench/RESULTS.md): 128 instead of the runtime's 32 cuts
    # the LM prefill of 900 tokens 5.7 -> 4.2 s and the vision merger 9.8 -> 8.6 s, for a small
    # extra deviation from f32 (random weights: LM logits 8.4 -> 9.2 %, vision 1.7 -> 2.1 %).
    # None: the runtime's default; 0 turns it off (5x slower prefill).
    dynamic_quantization_group_size: int | None = 128
    # Leave out image blocks (2x2 merge units, 32x32 px) that repeat a neighbour pixel for
    # pixel (pruning.py): a screenshot's flat areas cost no vision or prefill time. A request's
    # GenerationSettings.skip_repeats overrides it.
    skip_repeats: bool = True
    # Warm-up at load: the runtime's weight preparation happens here instead of in the first
    # answer, and each mapped weight file is released after it (peak RSS 4.6 -> ~3.3 GiB).
    warm_up: bool = True


def compile_properties(config: EngineConfig) -> tuple[dict, dict]:
    """OpenVINO's properties for the language model's and the vision encoder's sub-models."""
    common: dict = {"INFERENCE_NUM_THREADS": config.threads} if config.threads else {}
    if config.inference_precision:
        common["INFERENCE_PRECISION_HINT"] = config.inference_precision
    group = config.dynamic_quantization_group_size
    if group is not None and config.device.upper() == "CPU":
        common["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = group
    vision = config.vision_precision or config.inference_precision or "f32"
    return (
        {**common, **_hint(config.language_precision), **config.language_properties},
        {**common, **_hint(vision), **config.vision_properties},
    )


def _hint(precision: str | None) -> dict:
    return {"INFERENCE_PRECISION_HINT": precision} if precision else {}


def read_vision_spec(folder: Path, vision_cfg: dict, config: EngineConfig) -> VisionSpec:
    """The image pipeline's sizes: the model's patch geometry within the configured budget."""
    pre = read_json_object(folder / "preprocessor_config.json")
    patch, merge = int(vision_cfg["patch_size"]), int(vision_cfg["spatial_merge_size"])
    token_px = (patch * merge) ** 2
    size = pre.get("size", {})
    model_max = int(size.get("longest_edge") or pre.get("max_pixels") or 16_777_216)
    model_min = int(size.get("shortest_edge") or pre.get("min_pixels") or token_px * 4)
    return VisionSpec(
        patch_size=patch,
        temporal_patch_size=int(vision_cfg.get("temporal_patch_size", 2)),
        merge_size=merge,
        num_grid_per_side=int(int(vision_cfg["num_position_embeddings"]) ** 0.5),
        head_dim=int(vision_cfg["hidden_size"]) // int(vision_cfg["num_heads"]),
        image_mean=tuple(pre.get("image_mean", (0.5, 0.5, 0.5))),
        image_std=tuple(pre.get("image_std", (0.5, 0.5, 0.5))),
        min_pixels=max(
            config.min_visual_tokens * token_px if config.min_visual_tokens else model_min,
            token_px,
        ),
        max_pixels=min(model_max, config.max_visual_tokens * token_px),
        ceiling_pixels=model_max,
    )
