"""The word-level cascade bench/ocr_cascade.py measures: the small recognizer reads again only
the words of a tiny read that hold an unsure character or a dropped one, each cut from its line
crop by the tiny read's character columns, and their reads replace those words."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from desktop.core.ocr.model_inputs import rec_width


@dataclass(frozen=True)
class Detail:
    """Where a tiny read's characters lie in its crop, how sure each is, and the blank steps
    that held a character's worth of probability."""

    probabilities: np.ndarray  # each character's
    columns: np.ndarray  # each character's crop column
    dropped: np.ndarray  # each blank step's non-blank probability
    dropped_columns: np.ndarray  # each blank step's crop column


def detail_of(scores: np.ndarray, tensor_width: int, crop: np.ndarray) -> Detail:
    """The Detail of the best path through `scores` (T x C logits), for a crop padded into a
    tensor `tensor_width` columns wide."""
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    probabilities = shifted / shifted.sum(axis=1, keepdims=True)
    best = probabilities.argmax(axis=1)
    emitted = best != 0
    emitted[1:] &= best[1:] != best[:-1]
    steps = np.flatnonzero(emitted)
    blank = np.flatnonzero(best == 0)
    scale = tensor_width / len(scores) * crop.shape[1] / rec_width(crop)
    return Detail(
        probabilities[steps, best[steps]],
        (steps + 0.5) * scale,
        1 - probabilities[blank, 0],
        (blank + 0.5) * scale,
    )


def unsure_spans(
    text: str, detail: Detail, width: int, least: float, dropped: float
) -> list[tuple[int, int, int, int]]:
    """(first character, end character, first column, end column) of each run of words with a
    character under `least` or a blank step over `dropped`; a word's columns reach halfway to
    its neighbours' characters (its spaces included)."""
    if len(detail.columns) != len(text):
        return [(0, len(text), 0, width)]  # no columns to cut by: the whole line
    words = [(m.start(), m.end()) for m in _words(text)]
    edges = []
    for start, end in words:
        left = (detail.columns[start - 1] + detail.columns[start]) / 2 if start else 0.0
        right = (detail.columns[end - 1] + detail.columns[end]) / 2 if end < len(text) else width
        edges.append((left, right))
    unsure = []
    for (start, end), (left, right) in zip(words, edges, strict=True):
        shaky = bool((detail.probabilities[start:end] < least).any())
        inside = (detail.dropped_columns >= left) & (detail.dropped_columns < right)
        shaky = shaky or bool((detail.dropped[inside] > dropped).any())
        unsure.append(shaky)
    spans: list[tuple[int, int, int, int]] = []
    for index, shaky in enumerate(unsure):
        if not shaky:
            continue
        (start, end), (left, right) = words[index], edges[index]
        if spans and index and unsure[index - 1]:  # a run of unsure words: one crop
            first, _, x0, _ = spans.pop()
            spans.append((first, end, x0, int(np.ceil(right))))
        else:
            spans.append((start, end, int(left), int(np.ceil(right))))
    return spans


def splice(text: str, spans: list[tuple[int, int, int, int]], reads: list[str]) -> str:
    """`text` with each span's characters replaced by its read."""
    pieces, at = [], 0
    for (start, end, _, _), read in zip(spans, reads, strict=True):
        pieces += [text[at:start], read.strip()]
        at = end
    return "".join([*pieces, text[at:]])


def _words(text: str):  # noqa: ANN202
    import re

    return re.finditer(r"\S+", text)
