"""Runs the three exported vision sub-models on one image and caches the result by content."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import openvino as ov
from PIL import Image

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

    def cache_key(self, digest: str) -> str:
        return f"{digest}:{self.spec.min_pixels}:{self.spec.max_pixels}"

    def cached(self, digest: str) -> ImageEmbedding | None:
        key = self.cache_key(digest)
        block = self._cache.get(key)
        if block is not None:
            self._cache.move_to_end(key)
        return block

    def encode(self, image: Image.Image, digest: str) -> ImageEmbedding:
        """Embeds one image (merger output + deepstack features), from the cache when seen."""
        block = self.cached(digest)
        if block is not None:
            return block
        embeds, deepstack, grid = self._run(image)
        m = self.spec.merge_size
        block = ImageEmbedding(
            self.cache_key(digest), embeds, deepstack, (grid[1] // m, grid[2] // m)
        )
        self._cache[block.key] = block
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return block

    def warm_up(self) -> None:
        """Runs the smallest image once, so the runtime prepares its weights now, not on the
        user's first image (nothing is cached)."""
        side = self.spec.factor * 8
        self._run(Image.new("RGB", (side, side), "white"))

    def _run(self, image: Image.Image) -> tuple[np.ndarray, np.ndarray, tuple[int, int, int]]:
        prepared = prepare_image(image, self.spec)
        grid = prepared.grid
        self._patch.infer({0: prepared.pixel_patches})
        hidden = self._patch.get_output_tensor(0).data
        indices, weights = position_interpolation(grid, self.spec)
        self._pos.infer({0: indices})
        pos = self._pos.get_output_tensor(0).data  # [4, N, hidden]
        pos = (pos * weights[:, :, None]).sum(axis=0, dtype=np.float32)
        hidden = hidden + merge_order(pos, grid, self.spec.merge_size)
        inputs = {
            "hidden_states": np.ascontiguousarray(hidden, dtype=np.float32),
            "rotary_pos_emb": rotary_table(grid, self.spec),
        }
        if self.takes_dense_mask:  # one image per call: full attention, an all-zero mask
            n = hidden.shape[0]
            inputs["attention_mask"] = np.zeros((1, n, n), dtype=np.float32)
        self._merger.infer(inputs)
        embeds = np.array(self._merger.get_tensor("last_hidden_state").data, copy=True)
        deepstack = np.array(self._merger.get_tensor("deepstack_feature_lists").data, copy=True)
        return embeds, deepstack, grid
