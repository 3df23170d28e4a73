"""Runs the three exported vision sub-models on one image and caches the result by content."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import openvino as ov
from PIL import Image

from desktop.core.engine.pruning import kept_patch_rows, kept_units
from desktop.core.engine.sequence import ImageEmbedding
from desktop.core.engine.vision import (
    VisionSpec,
    merge_order,
    position_interpolation,
    prepare_image,
    rotary_table,
)


def drop_dense_attention_mask(model: ov.Model) -> ov.Model:
    """Replaces the merger's [1, N, N] attention-mask input by a broadcast zero.

    The export takes a dense mask so several images can share one call; DeskLens encodes one
    image per call (full attention within it), so the mask is all zeros: without it no N x N
    buffer (266 MB at 1080p) is built and filled for every image. Results are identical.
    """
    from openvino import opset13 as ops

    mask = next(
        (p for p in model.get_parameters() if "attention_mask" in p.output(0).get_names()), None
    )
    if mask is None:
        return model
    rank = mask.get_output_partial_shape(0).rank.get_length()
    zero = ops.constant(np.zeros((1,) * rank, np.float32))
    for target in list(mask.output(0).get_target_inputs()):
        target.replace_source_output(zero.output(0))
    model.remove_parameter(mask)
    model.validate_nodes_and_infer_types()
    return model


class VisionEncoder:
    def __init__(
        self,
        patch_model: ov.CompiledModel,
        pos_model: ov.CompiledModel,
        merger_model: ov.CompiledModel,
        spec: VisionSpec,
        cache_size: int = 32,
    ) -> None:
        self._patch = patch_model.create_infer_request()
        self._pos = pos_model.create_infer_request()
        self._merger = merger_model.create_infer_request()
        self.takes_dense_mask = any(
            "attention_mask" in port.get_names() for port in merger_model.inputs
        )
        self.spec = spec
        self._cache: OrderedDict[str, ImageEmbedding] = OrderedDict()
        self._cache_size = cache_size

    @contextmanager
    def reading_at(self, tokens: int | None) -> Iterator[None]:
        """Images are resized into `tokens` visual tokens each meanwhile (None: the spec's own
        budget), the earlier turns' too, as with the pruning mode; a request's own budget
        (GenerationSettings.max_visual_tokens). The cache keys say the budget, so the
        KV state's prefix of other-budget images is never reused for these."""
        if tokens is None:
            yield
            return
        own = self.spec
        self.spec = own.with_budget(tokens)
        try:
            yield
        finally:
            self.spec = own

    def cache_key(self, digest: str, skip_repeats: bool) -> str:
        """Content, pixel budget and pruning mode: each gives a different embedding."""
        mode = "skip" if skip_repeats else "full"
        return f"{digest}:{self.spec.min_pixels}:{self.spec.max_pixels}:{mode}"

    def cached(self, digest: str, skip_repeats: bool) -> ImageEmbedding | None:
        key = self.cache_key(digest, skip_repeats)
        block = self._cache.get(key)
        if block is not None:
            self._cache.move_to_end(key)
        return block

    def encode(self, image: Image.Image, digest: str, skip_repeats: bool) -> ImageEmbedding:
        """Embeds one image (merger output + deepstack features), from the cache when seen.
        With `skip_repeats`, merge units that repeat a neighbour are left out (pruning.py)."""
        block = self.cached(digest, skip_repeats)
        if block is not None:
            return block
        embeds, deepstack, grid, kept = self._run(image, skip_repeats)
        m = self.spec.merge_size
        block = ImageEmbedding(
            self.cache_key(digest, skip_repeats), embeds, deepstack,
            (grid[1] // m, grid[2] // m), kept,
        )  # fmt: skip
        self._cache[block.key] = block
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return block

    def warm_up(self) -> None:
        """Runs the smallest image once, so the runtime prepares its weights now, not on the
        user's first image (nothing is cached)."""
        side = self.spec.factor * 8
        self._run(Image.new("RGB", (side, side), "white"), skip_repeats=False)

    def _run(
        self, image: Image.Image, skip_repeats: bool
    ) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int], np.ndarray | None]:
        """(embeds, deepstack, patch grid, kept unit indices or None when all are kept)."""
        prepared = prepare_image(image, self.spec)
        grid, m = prepared.grid, self.spec.merge_size
        kept = kept_units(prepared.pixels, self.spec.factor) if skip_repeats else None
        if kept is not None and kept.size == grid[1] * grid[2] // (m * m):
            kept = None  # nothing repeats (a photo): the full path, without the copies
        rows = slice(None) if kept is None else kept_patch_rows(kept, m)
        self._patch.infer({0: np.ascontiguousarray(prepared.pixel_patches[rows])})
        hidden = self._patch.get_output_tensor(0).data
        # Position embedding and rotary angles of the whole grid, then the kept rows: a kept
        # unit keeps the position it has in the full image (never a smaller grid's).
        indices, weights = position_interpolation(grid, self.spec)
        indices = merge_order(indices.T, grid, m)[rows].T
        weights = merge_order(weights.T, grid, m)[rows].T
        self._pos.infer({0: np.ascontiguousarray(indices)})
        pos = self._pos.get_output_tensor(0).data  # [4, N, hidden]
        pos = (pos * weights[:, :, None]).sum(axis=0, dtype=np.float32)
        hidden = hidden + pos
        inputs = {
            "hidden_states": np.ascontiguousarray(hidden, dtype=np.float32),
            "rotary_pos_emb": np.ascontiguousarray(rotary_table(grid, self.spec)[rows]),
        }
        if self.takes_dense_mask:  # one image per call: full attention, an all-zero mask
            n = hidden.shape[0]
            inputs["attention_mask"] = np.zeros((1, n, n), dtype=np.float32)
        self._merger.infer(inputs)
        embeds = np.array(self._merger.get_tensor("last_hidden_state").data, copy=True)
        deepstack = np.array(self._merger.get_tensor("deepstack_feature_lists").data, copy=True)
        return embeds, deepstack, grid, kept
