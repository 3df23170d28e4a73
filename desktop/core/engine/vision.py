"""Qwen3-VL image preprocessing and vision-encoder inputs, in numpy (no torch at runtime).

Mirrors transformers' Qwen2VLImageProcessor (smart resize, bicubic, normalise, 2x2-merge patch
order) and Qwen3VLVisionModel's position interpolation and rotary table, so the exported
sub-models see exactly what they saw at export time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from PIL import Image

from desktop.core.chat import ErrorKind, Unanswerable


@dataclass(frozen=True)
class VisionSpec:
    patch_size: int
    temporal_patch_size: int
    merge_size: int
    num_grid_per_side: int  # side of the learned position-embedding grid
    head_dim: int  # vision attention head size (rotary table covers head_dim // 2)
    image_mean: tuple[float, float, float]
    image_std: tuple[float, float, float]
    min_pixels: int
    max_pixels: int
    ceiling_pixels: int = 16_777_216  # the model's own most, whatever the budget asks

    @property
    def factor(self) -> int:
        """Side of one visual token in pixels (patch x merge)."""
        return self.patch_size * self.merge_size

    def with_budget(self, tokens: int) -> VisionSpec:
        """This spec with a budget of `tokens` visual tokens per image (within the model's
        own limits): a request's GenerationSettings.max_visual_tokens."""
        budget = min(self.ceiling_pixels, max(self.min_pixels, tokens * self.factor**2))
        return replace(self, max_pixels=budget)


@dataclass
class PreparedImage:
    pixel_patches: np.ndarray  # [grid_t*grid_h*grid_w, C*T*P*P] float32
    grid: tuple[int, int, int]  # (t, h, w) in patches
    resized: tuple[int, int]  # (width, height) fed to the encoder
    pixels: np.ndarray  # [height, width, 3] uint8, the resized image (what pruning compares)

    @property
    def visual_tokens(self) -> int:
        t, h, w = self.grid
        return t * h * w // 4


def smart_resize(
    height: int, width: int, factor: int, min_pixels: int, max_pixels: int
) -> tuple[int, int]:
    """(height, width) multiples of `factor` within the pixel budget, aspect ratio kept."""
    if max(height, width) / min(height, width) > 200:
        raise Unanswerable(
            f"The image is too elongated ({width}x{height}); the aspect ratio must stay under 200.",
            ErrorKind.IMAGE,
        )
    h_bar = round(height / factor) * factor
    w_bar = round(width / factor) * factor
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


def visual_token_count(size: tuple[int, int], spec: VisionSpec) -> int:
    """Visual tokens an image of `size` (width, height) costs under the spec's budget."""
    h, w = smart_resize(size[1], size[0], spec.factor, spec.min_pixels, spec.max_pixels)
    return (h // spec.factor) * (w // spec.factor)


def prepare_image(image: Image.Image, spec: VisionSpec) -> PreparedImage:
    """Resizes into the budget and cuts the image into the encoder's flattened patches."""
    width, height = image.size
    new_h, new_w = smart_resize(height, width, spec.factor, spec.min_pixels, spec.max_pixels)
    rgb = image.convert("RGB")
    if (new_w, new_h) != (width, height):
        rgb = rgb.resize((new_w, new_h), Image.Resampling.BICUBIC)
    raw = np.asarray(rgb, dtype=np.uint8)
    pixels = raw.astype(np.float32) * np.float32(1 / 255)
    pixels = (pixels - np.asarray(spec.image_mean, np.float32)) / np.asarray(
        spec.image_std, np.float32
    )
    chw = pixels.transpose(2, 0, 1)  # C, H, W
    tp, p, m = spec.temporal_patch_size, spec.patch_size, spec.merge_size
    frames = np.repeat(chw[None], tp, axis=0)  # a still image fills the temporal patch
    grid_h, grid_w = new_h // p, new_w // p
    patches = frames.reshape(1, tp, 3, grid_h // m, m, p, grid_w // m, m, p)
    patches = patches.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    flat = np.ascontiguousarray(patches.reshape(grid_h * grid_w, 3 * tp * p * p))
    return PreparedImage(flat, (1, grid_h, grid_w), (new_w, new_h), raw)


def _linspace_f32(end: float, steps: int) -> np.ndarray:
    """torch.linspace(0, end, steps) in float32, bit for bit.

    torch fills the first half as step*i and the second as end - step*(steps-1-i), each with a
    single rounding (fused multiply-add): float64 arithmetic rounded once reproduces that.
    """
    if steps == 1:
        return np.zeros(1, np.float32)
    step = np.float64(np.float32(end) / np.float32(steps - 1))
    idx = np.arange(steps)
    half = steps // 2
    out = np.empty(steps, np.float32)
    out[:half] = (idx[:half] * step).astype(np.float32)
    out[half:] = (np.float64(end) - (steps - 1 - idx[half:]) * step).astype(np.float32)
    return out


def position_interpolation(
    grid: tuple[int, int, int], spec: VisionSpec
) -> tuple[np.ndarray, np.ndarray]:
    """Bilinear indices [4, N] and weights [4, N] into the learned position grid."""
    _, h, w = grid
    side = spec.num_grid_per_side
    h_idx, w_idx = _linspace_f32(side - 1, h), _linspace_f32(side - 1, w)
    h_floor, w_floor = h_idx.astype(np.int64), w_idx.astype(np.int64)
    h_ceil, w_ceil = np.minimum(h_floor + 1, side - 1), np.minimum(w_floor + 1, side - 1)
    dh = (h_idx - h_floor.astype(np.float32))[:, None]
    dw = (w_idx - w_floor.astype(np.float32))[None, :]
    base_floor, base_ceil = (h_floor * side)[:, None], (h_ceil * side)[:, None]
    indices = np.stack(
        [
            (base_floor + w_floor[None]).ravel(),
            (base_floor + w_ceil[None]).ravel(),
            (base_ceil + w_floor[None]).ravel(),
            (base_ceil + w_ceil[None]).ravel(),
        ]
    )
    one = np.float32(1)
    weights = np.stack(
        [
            ((one - dh) * (one - dw)).ravel(),
            ((one - dh) * dw).ravel(),
            (dh * (one - dw)).ravel(),
            (dh * dw).ravel(),
        ]
    ).astype(np.float32)
    return indices, weights


def merge_order(values: np.ndarray, grid: tuple[int, int, int], merge: int) -> np.ndarray:
    """Reorders row-major [h*w, ...] rows into the 2x2-merge block order the encoder uses."""
    t, h, w = grid
    tail = values.shape[1:]
    blocks = values.reshape(h // merge, merge, w // merge, merge, *tail)
    blocks = blocks.transpose(0, 2, 1, 3, *range(4, 4 + len(tail)))
    return np.tile(blocks.reshape(h * w, *tail), (t,) + (1,) * len(tail))


def rotary_table(grid: tuple[int, int, int], spec: VisionSpec) -> np.ndarray:
    """[N, head_dim/2] rotary angles (row half, column half) for the merger's attention."""
    t, h, w = grid
    dim = spec.head_dim // 2
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, dim, 2, dtype=np.float32) / np.float32(dim)))
    inv_freq = inv_freq.astype(np.float32)
    rows = np.repeat(np.arange(h), w).reshape(h * w, 1)
    cols = np.tile(np.arange(w), h).reshape(h * w, 1)
    coords = merge_order(np.concatenate([rows, cols], axis=1), (t, h, w), spec.merge_size)
    freqs = coords[..., None].astype(np.float32) * inv_freq  # [N, 2, dim/2]
    return freqs.reshape(coords.shape[0], -1).astype(np.float32)
