"""PixelPrune applied the reference's way on transformers' Qwen3-VL: the exactness tests' and
bench/prune_fp32_check.py's reference.

Independent of DeskLens's pruning code: the keep decision is a plain loop over the merge units of
the normalised pixel_values (the reference's anchored form); the vision tower runs patch embedding,
position embedding and rotary table for the full grid and then takes the kept rows; the language
model gets the M-RoPE positions of the full prompt with the pruned image pads' slots dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def keep_units_loop(pixel_values, grid: tuple[int, int, int], merge: int = 2) -> list[int]:
    """Merged-token indices kept at tau = 0: one unit at a time, predicted from its anchors."""
    import torch

    _, h, w = grid
    rows, cols = h // merge, w // merge
    units = pixel_values.reshape(rows, cols, -1)
    anchor = units.clone()
    same = torch.equal
    kept = [0]
    for r in range(rows):
        for c in range(cols):
            if r == 0 and c == 0:
                continue
            if r == 0:
                pred = anchor[r, c - 1]
            elif c == 0:
                pred = anchor[r - 1, c]
            else:
                left, top, corner = anchor[r, c - 1], anchor[r - 1, c], anchor[r - 1, c - 1]
                pred = top if same(corner, left) and not same(corner, top) else left
            if same(units[r, c], pred):
                anchor[r, c] = pred
            else:
                kept.append(r * cols + c)
    return kept


@dataclass
class PrunedImages:
    embeds: object  # torch [kept tokens, hidden]
    deepstack: list  # per deepstack layer, torch [kept tokens, hidden]
    kept: list[list[int]]  # per image, merged-token indices kept


def encode_pruned(model, prepared: list) -> PrunedImages:
    """The vision tower on the kept patches: full-grid positions and rotary rows, then selected."""
    import torch
    import torch.nn.functional as F

    visual = model.model.visual
    merge = visual.spatial_merge_size
    pixels = torch.from_numpy(np.concatenate([p.pixel_patches for p in prepared]))
    grids = torch.tensor([list(p.grid) for p in prepared])
    kept, rows, offset = [], [], 0
    for p in prepared:
        n = int(np.prod(p.grid))
        units = keep_units_loop(torch.from_numpy(p.pixel_patches), p.grid, merge)
        kept.append(units)
        block = merge * merge
        rows += [offset + u * block + i for u in units for i in range(block)]
        offset += n
    index = torch.tensor(rows)
    with torch.no_grad():
        hidden_full = visual.patch_embed(pixels)
        pos_full = visual.fast_pos_embed_interpolate(grids)
        rotary_full = visual.rot_pos_emb(grids).reshape(hidden_full.shape[0], -1)
        hidden = hidden_full[index] + pos_full[index]
        rotary = rotary_full[index]
        emb = torch.cat((rotary, rotary), dim=-1)
        position_embeddings = (emb.cos(), emb.sin())
        lengths = torch.tensor([len(k) * merge * merge for k in kept], dtype=torch.int32)
        cu_seqlens = F.pad(lengths.cumsum(0, dtype=torch.int32), (1, 0), value=0)
        deepstack = []
        for layer, block in enumerate(visual.blocks):
            hidden = block(hidden, cu_seqlens=cu_seqlens, position_embeddings=position_embeddings)
            if layer in visual.deepstack_visual_indexes:
                merger = visual.deepstack_merger_list[visual.deepstack_visual_indexes.index(layer)]
                deepstack.append(merger(hidden))
        embeds = visual.merger(hidden)
    return PrunedImages(embeds, deepstack, kept)


def full_prompt(ids: list[int], image_pad: int, prepared: list, merge: int = 2) -> list[int]:
    """The unpruned prompt: each image's run of pads widened to the whole image's count."""
    out, images, i = [], iter(prepared), 0
    while i < len(ids):
        if ids[i] != image_pad:
            out.append(ids[i])
            i += 1
            continue
        while i < len(ids) and ids[i] == image_pad:
            i += 1
        _, h, w = next(images).grid
        out += [image_pad] * (h * w // (merge * merge))
    return out


def generate_pruned(model, full_ids: list[int], prepared: list, new_tokens: int, eos: int):
    """Greedy tokens, prefill logits, the pruned prompt ids and its positions [3, T]."""
    import torch

    images = encode_pruned(model, prepared)
    pad = model.config.image_token_id
    ids = torch.tensor([full_ids])
    grids = torch.tensor([list(p.grid) for p in prepared])
    with torch.no_grad():
        positions, _ = model.model.get_rope_index(ids, grids, None, torch.ones_like(ids))
    keep = torch.ones(len(full_ids), dtype=torch.bool)
    pad_slots = iter(np.flatnonzero(np.asarray(full_ids) == pad).tolist())
    for p, units in zip(prepared, images.kept, strict=True):
        count = int(np.prod(p.grid)) // 4
        slots = [next(pad_slots) for _ in range(count)]
        drop = set(range(count)) - set(units)
        keep[[slots[d] for d in drop]] = False
    ids, positions = ids[:, keep], positions[:, :, keep]
    text = model.model.language_model
    with torch.no_grad():
        embeds = model.model.get_input_embeddings()(ids)
        visual = ids == pad
        embeds[visual] = images.embeds
        out = text(
            inputs_embeds=embeds, position_ids=positions, attention_mask=torch.ones_like(ids),
            visual_pos_masks=visual, deepstack_visual_embeds=images.deepstack, use_cache=True,
        )  # fmt: skip
        logits = model.lm_head(out.last_hidden_state[:, -1])[0]
        prefill_logits = logits.numpy()
        cache, tokens = out.past_key_values, []
        position = int(positions.max()) + 1
        attention = torch.ones_like(ids)
        while len(tokens) < new_tokens:
            token = int(logits.argmax())
            tokens.append(token)
            if token == eos:
                break
            attention = torch.cat([attention, torch.ones((1, 1), dtype=attention.dtype)], 1)
            step = text(
                inputs_embeds=model.model.get_input_embeddings()(torch.tensor([[token]])),
                position_ids=torch.full((3, 1, 1), position),
                attention_mask=attention, past_key_values=cache, use_cache=True,
            )  # fmt: skip
            cache, position = step.past_key_values, position + 1
            logits = model.lm_head(step.last_hidden_state[:, -1])[0]
    return tokens, prefill_logits, ids[0].tolist(), positions[:, 0].numpy()
