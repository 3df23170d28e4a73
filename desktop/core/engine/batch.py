"""Several independent questions answered together (e.g. "extract the text" of N screenshots).

Decoding one token reads every weight of the language model once, whatever the batch size: the
step is bound by memory bandwidth, so B answers decoded side by side cost little more than one.
Prompts of different lengths are padded on the left (masked out) so that every row's last
prompt token sits in the same column; each row keeps its own 3-D positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class BatchPrompt:
    """One row of a batched prefill: its embeddings, positions and visual rows."""

    embeds: np.ndarray  # [T, hidden]
    positions: np.ndarray  # [3, T]
    visual_mask: np.ndarray  # [T] bool
    deepstack: np.ndarray | None  # [layers, visual rows, hidden]

    @property
    def length(self) -> int:
        return self.embeds.shape[0]


@dataclass
class BatchInputs:
    embeds: np.ndarray  # [B, T, hidden]
    positions: np.ndarray  # [3, B, T]
    attention_mask: np.ndarray  # [B, T] int64, 0 on padding
    visual_mask: np.ndarray  # [B, T] bool
    deepstack: np.ndarray | None  # [layers, all visual rows in row-major order, hidden]


def pad_left(prompts: Sequence[BatchPrompt]) -> BatchInputs:
    """Stacks prompts into one batch, each right-aligned; padding is zero and masked out."""
    batch, length = len(prompts), max(p.length for p in prompts)
    hidden = prompts[0].embeds.shape[1]
    embeds = np.zeros((batch, length, hidden), np.float32)
    positions = np.zeros((3, batch, length), np.int64)
    mask = np.zeros((batch, length), np.int64)
    visual = np.zeros((batch, length), bool)
    for row, prompt in enumerate(prompts):
        start = length - prompt.length
        embeds[row, start:] = prompt.embeds
        positions[:, row, start:] = prompt.positions
        mask[row, start:] = 1
        visual[row, start:] = prompt.visual_mask
    stacks = [p.deepstack for p in prompts if p.deepstack is not None]
    deepstack = np.concatenate(stacks, axis=1) if stacks else None
    return BatchInputs(embeds, positions, mask, visual, deepstack)
