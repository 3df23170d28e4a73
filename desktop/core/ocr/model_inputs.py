"""What the PP-OCR models are fed: the detector's page tensor (scaled to multiples of 32,
framed in its background colour) and the recognizer's line tensors (48 px high, padded to a
few widths, short lines of one width together)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from desktop.core.ocr.detection_scale import DetectorSettings, detector_scale

REC_HEIGHT = 48  # the recognition model's input height
# Recognition inputs are padded to a multiple of this width so that OpenVINO meets the same
# few shapes again: a new dynamic shape costs about twice a known one, and a 1280 x 800
# screenshot read 0.3 s sooner on its first run with 128 than with 64, no slower after.
REC_WIDTH_STEP = 128
# One line per request, but for short ones: lines run in parallel streams, and no line is
# padded to another's width (which cost more than batching saved: batches of 8 were 15%
# slower). Short lines of one padded width go together, up to 8 a request (sizes halving, so
# few shapes): each row holds the pixels it held alone, and the scores come out the same to
# the bit, for ~1 ms less fixed cost per line (per line, one thread: 128 wide 0.78x, 256
# 0.86x, 384 0.92x of the time alone; wider lines gained nothing or lost).
REC_BATCH = 1
REC_BATCH_SIZES = (8, 4, 2, 1)
REC_BATCH_WIDTH = 384
DET_MULTIPLE = 32  # the detector's input sides must be multiples of 32


@dataclass(frozen=True)
class DetectorView:
    tensor: np.ndarray  # 1 x 3 x H x W, normalised to -1..1
    scale: np.ndarray  # (x, y) factors from image pixels to tensor pixels
    pad: int  # background margin around the scaled image, in tensor pixels


def detector_input(bgr: np.ndarray, settings: DetectorSettings, zoom: float = 1.0) -> DetectorView:
    """The image scaled to multiples of 32 and framed by a margin of its background colour
    (text touching the border is then still detected)."""
    height, width = bgr.shape[:2]
    scale = detector_scale(height, width, settings, zoom)
    det_w = max(DET_MULTIPLE, round(width * scale / DET_MULTIPLE) * DET_MULTIPLE)
    det_h = max(DET_MULTIPLE, round(height * scale / DET_MULTIPLE) * DET_MULTIPLE)
    resized = cv2.resize(bgr, (det_w, det_h), interpolation=cv2.INTER_LINEAR)
    pad = DET_MULTIPLE // 2
    padded = cv2.copyMakeBorder(
        resized, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=_border_colour(bgr)
    )
    tensor = normalise(padded)[np.newaxis]
    return DetectorView(tensor, np.array([det_w / width, det_h / height], np.float32), pad)


def recognizer_inputs(crops: Sequence[np.ndarray]) -> Iterator[tuple[list[int], np.ndarray]]:
    """Line crops as (crop indices, N x 3 x 48 x W tensor): one a request, short lines of one
    padded width several (REC_BATCH_SIZES)."""
    widths = [rec_width(crop) for crop in crops]
    padded = [math.ceil(width / REC_WIDTH_STEP) * REC_WIDTH_STEP for width in widths]
    # Longest first: the parallel streams then finish together instead of one of them
    # starting the longest line last.
    order = sorted(range(len(crops)), key=widths.__getitem__, reverse=True)
    start = 0
    while start < len(order):
        padded_width = padded[order[start]]
        alike = 1
        while start + alike < len(order) and padded[order[start + alike]] == padded_width:
            alike += 1
        size = REC_BATCH
        if padded_width <= REC_BATCH_WIDTH:
            size = next(size for size in REC_BATCH_SIZES if size <= alike)
        batch, start = order[start : start + size], start + size
        tensor = np.zeros((len(batch), 3, REC_HEIGHT, padded_width), dtype=np.float32)
        for row, index in enumerate(batch):
            line = cv2.resize(crops[index], (widths[index], REC_HEIGHT))
            tensor[row, :, :, : widths[index]] = normalise(line)
        yield batch, tensor


def rec_width(crop: np.ndarray) -> int:
    height, width = crop.shape[:2]
    return max(REC_HEIGHT // 4, math.ceil(REC_HEIGHT * width / max(height, 1)))


def normalise(bgr: np.ndarray) -> np.ndarray:
    return bgr.astype(np.float32).transpose(2, 0, 1) / 127.5 - 1.0


def _border_colour(bgr: np.ndarray) -> tuple[int, int, int]:
    edges = np.concatenate([bgr[0], bgr[-1], bgr[:, 0], bgr[:, -1]])
    blue, green, red = (int(channel) for channel in np.median(edges, axis=0))
    return blue, green, red
