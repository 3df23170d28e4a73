"""From the detector's text probability map to line quadrilaterals, and from those to crops.

This is PP-OCR's DB post-processing (Differentiable Binarization, PaddleOCR's defaults as
rapidocr ships them), written on OpenCV alone: importing rapidocr's own version costs
0.6 s of start-up (it loads its whole package and configuration), which every
`desklens ocr` run would pay.
"""

from __future__ import annotations

import cv2
import numpy as np

THRESHOLD = 0.3  # probability above which a pixel belongs to text
BOX_THRESHOLD = 0.5  # mean probability a candidate box needs
UNCLIP_RATIO = 1.6  # how far a box grows back past the shrunk text kernel the model predicts
# PaddleOCR's 1,000 lost the top of a dense spreadsheet (~1,900 cells on a 3840 px sheet;
# OpenCV lists contours bottom to top): the cap only bounds a pathological page's time now.
MAX_CANDIDATES = 50_000
MIN_SIDE = 3  # pixels; smaller candidates are noise
# A crop is vertical text when it is this many times the page's median line height tall.
VERTICAL_LINE = 1.6
# A candidate below BOX_THRESHOLD is looked at again at this threshold: a lone digit joined to
# the next column by a faint bridge of probability ("4   Laptop stand", a right-aligned Qty
# cell 16 px from its neighbour) made one candidate whose mean fell to 0.4, and the digit was
# lost. Its strong core alone is a box of its own.
CORE_THRESHOLD = 0.6


def text_quads(probability: np.ndarray, threshold: float = THRESHOLD) -> list[np.ndarray]:
    """4x2 float32 quadrilaterals (clockwise from top-left) around the text in an H x W map."""
    mask = cv2.dilate((probability > threshold).astype(np.uint8), np.ones((2, 2), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    height, width = probability.shape
    quads = []
    for contour in contours[:MAX_CANDIDATES]:
        (centre, (box_width, box_height), angle) = cv2.minAreaRect(contour)
        if min(box_width, box_height) < MIN_SIDE:
            continue
        corners = cv2.boxPoints((centre, (box_width, box_height), angle))
        if _mean_inside(probability, corners) < BOX_THRESHOLD:
            if threshold < CORE_THRESHOLD:
                quads += _strong_cores(probability, contour)
            continue
        # Growing a rectangle by a rounded offset and taking the bounding rectangle again
        # (PaddleOCR's "unclip") is the same as widening each side by the offset.
        offset = box_width * box_height * UNCLIP_RATIO / (2 * (box_width + box_height))
        grown = (centre, (box_width + 2 * offset, box_height + 2 * offset), angle)
        if min(grown[1]) < MIN_SIDE + 2:
            continue
        quad = _clockwise(cv2.boxPoints(grown))
        quad[:, 0] = quad[:, 0].clip(0, width - 1)
        quad[:, 1] = quad[:, 1].clip(0, height - 1)
        if min(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[0] - quad[3])) > MIN_SIDE:
            quads.append(quad)
    return quads


def _strong_cores(probability: np.ndarray, contour: np.ndarray) -> list[np.ndarray]:
    """The boxes of a weak candidate's strongly probable parts, in the map's pixels."""
    left, top, width, height = cv2.boundingRect(contour)
    inside = np.zeros((height, width), np.uint8)
    cv2.drawContours(inside, [contour - [left, top]], -1, 1, thickness=cv2.FILLED)
    window = probability[top : top + height, left : left + width] * inside
    return [quad + [left, top] for quad in text_quads(window, CORE_THRESHOLD)]


def crop_lines(image: np.ndarray, quads: list[np.ndarray]) -> list[np.ndarray]:
    """`crop_line` for each quadrilateral. A lone glyph boxed taller than wide (a dash in a
    6 x 10 px box) is no vertical line: turned sideways, it read as "1". A vertical line is
    two glyphs tall or more."""
    sides = [min(crop_shape(quad)) for quad in quads]
    min_turn = VERTICAL_LINE * float(np.median(sides)) if sides else 0.0
    return [crop_line(image, quad, min_turn) for quad in quads]


def crop_line(image: np.ndarray, quad: np.ndarray, min_turn: float = 0.0) -> np.ndarray:
    """The quadrilateral's pixels warped to an upright rectangle; tall crops, at least
    `min_turn` pixels tall, turn sideways (vertical text reads left to right then)."""
    height, width = crop_shape(quad)
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    transform = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    crop = cv2.warpPerspective(
        image, transform, (width, height), borderMode=cv2.BORDER_REPLICATE, flags=cv2.INTER_CUBIC
    )
    turn = crop.shape[0] >= 1.5 * crop.shape[1] and crop.shape[0] >= min_turn
    return np.rot90(crop) if turn else crop


def crop_shape(quad: np.ndarray) -> tuple[int, int]:
    """(height, width) of the crop `crop_line` cuts for a quadrilateral, before any turn."""
    width = int(max(np.linalg.norm(quad[0] - quad[1]), np.linalg.norm(quad[2] - quad[3])))
    height = int(max(np.linalg.norm(quad[0] - quad[3]), np.linalg.norm(quad[1] - quad[2])))
    return height, width


def _mean_inside(probability: np.ndarray, corners: np.ndarray) -> float:
    """Mean probability inside the polygon (over its bounding rectangle, masked)."""
    height, width = probability.shape
    left, top = np.floor(corners.min(axis=0)).astype(int).clip(0, [width - 1, height - 1])
    right, bottom = np.ceil(corners.max(axis=0)).astype(int).clip(0, [width - 1, height - 1])
    mask = np.zeros((bottom - top + 1, right - left + 1), dtype=np.uint8)
    cv2.fillPoly(mask, [(corners - [left, top]).astype(np.int32)], 1)
    return cv2.mean(probability[top : bottom + 1, left : right + 1], mask)[0]


def _clockwise(points: np.ndarray) -> np.ndarray:
    """Top-left, top-right, bottom-right, bottom-left."""
    by_x = points[np.argsort(points[:, 0])]
    top_left, bottom_left = by_x[:2][np.argsort(by_x[:2, 1])]
    top_right, bottom_right = by_x[2:][np.argsort(by_x[2:, 1])]
    return np.array([top_left, top_right, bottom_right, bottom_left], dtype=np.float32)
