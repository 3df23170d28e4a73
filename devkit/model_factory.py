"""Builds random-weight Qwen3-VL checkpoints locally (no hub): a tiny one for tests, the real
Qwen3-VL-2B shape for benchmarks. Needs the `convert` extra (torch, transformers, tokenizers).

The tokenizer is a byte-level BPE trained in seconds on generated text, carrying Qwen's special
tokens and a Qwen3-VL style chat template, so the checkpoint goes through exactly the same export
and runtime as the published model.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

# Qwen3-VL's template shape: no default system prompt, images before the text of a user turn;
# `content` may be a plain string (VLMPipeline passes strings) or a list of typed parts.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string %}{{- message['content'] }}"
    "{%- else %}{%- for part in message['content'] %}"
    "{%- if part['type'] == 'image' or 'image' in part %}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif part['type'] == 'video' %}{{- '<|vision_start|><|video_pad|><|vision_end|>' }}"
    "{%- elif 'text' in part %}{{- part['text'] }}{%- endif %}"
    "{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

TINY_TEXT = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    max_position_embeddings=4096,
    rope_theta=5_000_000.0,
    rope_scaling={"rope_type": "default", "mrope_section": [2, 3, 3], "mrope_interleaved": True},
    tie_word_embeddings=True,
    initializer_range=0.2,  # wide enough that greedy output varies with the input
)
TINY_VISION = dict(
    depth=2,
    hidden_size=32,
    intermediate_size=64,
    num_heads=2,
    patch_size=16,
    spatial_merge_size=2,
    temporal_patch_size=2,
    out_hidden_size=64,
    num_position_embeddings=64,
    deepstack_visual_indexes=[0, 1],
    initializer_range=0.2,
)

# Published Qwen3-VL-2B-Instruct shape (see shared notes); weights random, cost identical.
REAL_2B_TEXT = dict(
    hidden_size=2048,
    intermediate_size=6144,
    num_hidden_layers=28,
    num_attention_heads=16,
    num_key_value_heads=8,
    head_dim=128,
    max_position_embeddings=262144,
    rope_theta=5_000_000.0,
    rope_scaling={"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": True},
    tie_word_embeddings=True,
)
REAL_2B_VISION = dict(
    depth=24,
    hidden_size=1024,
    intermediate_size=4096,
    num_heads=16,
    patch_size=16,
    spatial_merge_size=2,
    temporal_patch_size=2,
    out_hidden_size=2048,
    num_position_embeddings=2304,
    deepstack_visual_indexes=[5, 11, 17],
)

# Qwen3-VL's published processor budget, in pixels.
MIN_PIXELS = 65_536
MAX_PIXELS = 16_777_216


def _corpus(n_lines: int = 3000, seed: int = 0) -> list[str]:
    words = [
        "the",
        "total",
        "invoice",
        "amount",
        "date",
        "name",
        "address",
        "table",
        "row",
        "column",
        "text",
        "image",
        "screenshot",
        "document",
        "page",
        "number",
        "price",
        "tax",
        "due",
        "paid",
        "order",
        "customer",
        "item",
        "quantity",
        "what",
        "is",
        "where",
        "how",
        "many",
        "which",
        "describe",
        "extract",
        "markdown",
        "json",
        "field",
        "value",
        "report",
        "chart",
        "figure",
        "line",
        "hello",
        "world",
        "model",
        "answer",
        "question",
        "please",
        "read",
        "all",
        "of",
        "this",
        "a",
        "an",
        "in",
        "on",
        "for",
        "to",
        "and",
        "or",
    ]
    rng = random.Random(seed)
    lines = []
    for _ in range(n_lines):
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
        lines.append(sentence.capitalize() + rng.choice([".", "?", "!", ":", " 42.", " $19.99."]))
    lines += ["ÄÖÜ äöü é è ß € 日本語 中文 テキスト 👍 ✓"] * 20  # multi-byte characters
    return lines


def build_tokenizer(out_dir: Path, vocab_size: int = 800):
    """Trains a byte-level BPE with Qwen's special tokens and saves it as Qwen2TokenizerFast."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import Qwen2TokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(_corpus(), trainer=trainer)
    fast = Qwen2TokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out_dir)
    return fast


def build_checkpoint(
    out_dir: Path,
    *,
    text: dict | None = None,
    vision: dict | None = None,
    seed: int = 0,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> Path:
    """Writes a random-weight Qwen3-VL checkpoint (model, tokenizer, processor) into out_dir."""
    import torch
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen3VLConfig,
        Qwen3VLForConditionalGeneration,
        Qwen3VLProcessor,
    )
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(out_dir)
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    text_cfg = dict(text or TINY_TEXT, vocab_size=len(tokenizer))
    config = Qwen3VLConfig(
        text_config=text_cfg,
        vision_config=dict(vision or TINY_VISION),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=text_cfg["tie_word_embeddings"],
    )
    config.eos_token_id = ids["<|im_end|>"]
    config.pad_token_id = ids["<|endoftext|>"]
    config.text_config.eos_token_id = ids["<|im_end|>"]
    torch.manual_seed(seed)
    model = Qwen3VLForConditionalGeneration(config).eval()
    model.generation_config.eos_token_id = [ids["<|im_end|>"], ids["<|endoftext|>"]]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    model.generation_config.do_sample = False
    model.save_pretrained(out_dir, safe_serialization=True)

    size = {"shortest_edge": min_pixels, "longest_edge": max_pixels}
    # min/max_pixels must be given too: transformers 4.57 lets their Qwen2-VL defaults (~1 MP)
    # override `size`, which would quietly cap every image at ~980 visual tokens.
    image_processor = Qwen2VLImageProcessor(
        patch_size=16,
        merge_size=2,
        temporal_patch_size=2,
        size=size,
        min_pixels=min_pixels,
        max_pixels=max_pixels,
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
    )
    video_processor = Qwen3VLVideoProcessor(
        patch_size=16, merge_size=2, temporal_patch_size=2, size=size
    )
    processor = Qwen3VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(out_dir)
    (out_dir / "chat_template.json").write_text(json.dumps({"chat_template": CHAT_TEMPLATE}))
    return out_dir


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Build a random-weight Qwen3-VL checkpoint.")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--real-size", action="store_true", help="Qwen3-VL-2B shape (bench)")
    args = parser.parse_args()
    if args.real_size:
        build_checkpoint(args.out_dir, text=REAL_2B_TEXT, vision=REAL_2B_VISION)
    else:
        build_checkpoint(args.out_dir)
    print(args.out_dir)
