"""The conversation as the language model sees it: token ids, image blocks and 3-D positions.

Every position also gets a *key* (a token id, or the image's cache key and row), so the engine can
compare a new prompt with what the KV state already holds and feed only what differs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from desktop.core.engine.tokens import SpecialIds


@dataclass
class ImageEmbedding:
    key: str  # content digest + pixel budget + pruning mode
    embeds: np.ndarray  # [n, hidden] merger output, one row per kept token
    deepstack: np.ndarray  # [layers, n, hidden]
    grid_hw: tuple[int, int]  # merged token grid (rows, cols) of the whole image
    kept: np.ndarray | None = None  # row-major grid indices of the n tokens; None: all of them

    @property
    def tokens(self) -> int:
        """Tokens the prompt holds for this image (after pruning)."""
        return self.embeds.shape[0]

    @property
    def full_tokens(self) -> int:
        """Tokens the whole image would cost without pruning."""
        return self.grid_hw[0] * self.grid_hw[1]

    def cells(self) -> np.ndarray:
        """Grid index (row-major) of each token the prompt holds."""
        return np.arange(self.tokens) if self.kept is None else self.kept


@dataclass
class TokenSequence:
    special: SpecialIds
    encode: Callable[[str], list[int]]
    ids: list[int] = field(default_factory=list)
    keys: list[object] = field(default_factory=list)
    positions: list[tuple[int, int, int]] = field(default_factory=list)
    images: list[tuple[int, ImageEmbedding]] = field(default_factory=list)  # (start, block)
    next_position: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    def add_tokens(self, ids: Sequence[int]) -> None:
        for token in ids:
            self.ids.append(int(token))
            self.keys.append(int(token))
            p = self.next_position
            self.positions.append((p, p, p))
            self.next_position += 1

    def add_text(self, text: str) -> None:
        self.add_tokens(self.encode(text))

    def add_image(self, block: ImageEmbedding) -> None:
        rows, cols = block.grid_hw
        self.add_tokens([self.special.vision_start])
        base = self.next_position
        self.images.append((len(self.ids), block))
        # One pad per kept token, at the position it has in the whole image: pruned tokens
        # leave gaps in the 3-D positions (PixelPrune's HF path, which its training matches).
        for index, cell in enumerate(block.cells().tolist()):
            r, c = divmod(cell, cols)
            self.ids.append(self.special.image_pad)
            self.keys.append((block.key, index))
            self.positions.append((base, base + r, base + c))
        # Qwen3-VL: text after an image continues at (largest position in the whole image) + 1,
        # with or without pruning.
        self.next_position = base + max(rows, cols)
        self.add_tokens([self.special.vision_end])

    def add_user_turn(self, question: str, images: Sequence[ImageEmbedding]) -> None:
        self.open_user_turn(images)
        self.close_user_turn(question)

    def open_user_turn(self, images: Sequence[ImageEmbedding]) -> None:
        """The start of a user turn up to the end of its images: it does not depend on the
        question (encoded on its own), so it can be prefilled before the question is typed."""
        self.add_tokens([self.special.im_start])
        self.add_text("user\n")
        for block in images:
            self.add_image(block)

    def close_user_turn(self, question: str) -> None:
        s = self.special
        self.add_text(question)
        self.add_tokens([s.im_end])
        self.add_text("\n")
        self.add_tokens([s.im_start])
        self.add_text("assistant\n")

    def add_answer(self, answer_ids: Sequence[int]) -> None:
        """A finished assistant turn: its own ids (never re-tokenised), then the turn's end."""
        self.add_tokens(answer_ids)
        self.add_tokens([self.special.im_end])
        self.add_text("\n")

    def held_prefix(self, slots: Sequence[object | None], most: int) -> tuple[int, int]:
        """How much of this prompt a KV state already holds: `slots` are the keys of its
        positions in order, None where a position was discarded (masked out, skipped here).
        Returns (prompt positions held, at most `most`; state positions to keep for them)."""
        matched = kept = 0
        for key in slots:
            if key is not None:
                if matched >= min(most, len(self.keys)) or key != self.keys[matched]:
                    break
                matched += 1
            kept += 1
        return matched, kept

    def position_array(self, start: int, stop: int) -> np.ndarray:
        return np.asarray(self.positions[start:stop], dtype=np.int64).T.reshape(3, stop - start)

    def visual_rows(
        self, start: int, stop: int
    ) -> tuple[np.ndarray, list[tuple[int, np.ndarray]], list[np.ndarray]]:
        """Visual mask [T] and the (embeds, deepstack) rows for positions start..stop-1."""
        mask = np.zeros(stop - start, dtype=bool)
        embeds, deepstack = [], []
        for first, block in self.images:
            lo, hi = max(first, start), min(first + block.tokens, stop)
            if lo >= hi:
                continue
            mask[lo - start : hi - start] = True
            embeds.append((lo - start, block.embeds[lo - first : hi - first]))
            deepstack.append(block.deepstack[:, lo - first : hi - first])
        return mask, embeds, deepstack
