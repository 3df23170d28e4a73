"""Did the fast OCR fail on this image? Its recognizer knows Latin, digits, punctuation and
Chinese/Japanese characters; a Cyrillic, Korean or Arabic page (or handwriting) is still found
line by line by the detector, but each line is read below `MIN_CONFIDENCE` and left out, or
kept as the few characters it knows (the digits of a long Cyrillic line), so the result looks
empty or short instead of wrong. When most found lines were left out, the app
says so and offers the VLM ("Read with AI"), which reads those scripts.

Calibrated with bench/unreadable_bench.py (rendered Cyrillic, Korean and Arabic pages against
every screenshot style of the OCR benchmark): see bench/RESULTS.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.ocr.models import OcrResult

MIN_UNSURE_LINES = 3  # a chart's axis glyph or a logo is one or two unsure lines, not a page
MIN_UNSURE_SHARE = 0.3  # of the lines found, this share (or more) could not be read
LONG_LINE = 4  # a line box this many times wider than tall should hold several words
EM_ADVANCE = 0.5  # a character's mean advance, in line-box heights (the box has leading)
SPARSE_SHARE = 0.5  # read fewer characters than half of what its width holds: sparse
UNREADABLE_NOTE = (
    "The fast OCR could not read most of the text in this image: it may be in a script it "
    "does not know (such as Cyrillic, Korean or Arabic) or handwritten. The AI model can read it."
)


@dataclass(frozen=True)
class Readability:
    read_lines: int
    unsure_lines: int

    @property
    def unsure_share(self) -> float:
        found = self.read_lines + self.unsure_lines
        return self.unsure_lines / found if found else 0.0

    @property
    def failed(self) -> bool:
        return self.unsure_lines >= MIN_UNSURE_LINES and self.unsure_share >= MIN_UNSURE_SHARE


def is_sparse(text: str, box: Sequence[int]) -> bool:
    """A long line box read as a few characters: the recognizer kept only what it knows
    (digits in a Cyrillic line, read as "  41     " with a confident score)."""
    width, height = box[2] - box[0], box[3] - box[1]
    if height <= 0 or width < LONG_LINE * height:  # a short label or number: nothing to say
        return False
    expected = width / (EM_ADVANCE * height)  # characters a line this wide usually holds
    return len("".join(text.split())) < SPARSE_SHARE * expected


def readability(result: OcrResult) -> Readability:
    # A table row spans its cells' gaps: its width says nothing about its characters.
    sparse = sum(is_sparse(line.text, line.box) for line in result.lines if line.table is None)
    return Readability(len(result.lines) - sparse, result.unsure_lines + sparse)


def readability_of_json(text: str) -> Readability:
    """From an extraction's stored JSON (every page summed); nothing unsure if it is not ours."""
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return Readability(0, 0)
    pages = data.get("pages", [data]) if isinstance(data, dict) else []
    read = unsure = 0
    for page in pages if isinstance(pages, list) else []:
        if isinstance(page, dict):
            lines, count = page.get("lines"), page.get("unsure_lines", 0)
            sparse, kept = _sparse_lines(lines if isinstance(lines, list) else [])
            read += kept
            unsure += sparse + (
                count if isinstance(count, int) and not isinstance(count, bool) else 0
            )
    return Readability(read, unsure)


def _sparse_lines(lines: list) -> tuple[int, int]:
    """(sparse, other) among the stored lines (dicts with "text" and "box")."""
    sparse = 0
    for line in lines:
        text, box = (line.get("text"), line.get("box")) if isinstance(line, dict) else (0, 0)
        if not (isinstance(text, str) and isinstance(box, list) and len(box) == 4):
            continue
        usable = line.get("table") is None and all(isinstance(v, (int, float)) for v in box)
        sparse += usable and is_sparse(text, box)
    return sparse, len(lines) - sparse
