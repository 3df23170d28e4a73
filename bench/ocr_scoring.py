"""Scores of one reading against a Sample's truth: CER (desktop.core.ocr.accuracy, the same
function the tests use), table structure, and decorations read as text."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from bench.ocr_samples import Sample
from desktop.core.ocr import OcrResult
from desktop.core.ocr.accuracy import best_table_score, cer, normalise
from desktop.core.ocr.models import Box

# A decoration counts as read when an output line's box covers this share of its box.
DECORATION_COVER = 0.5


@dataclass
class Reading:
    cer: float
    seconds: float
    table_f1: float | None = None  # mean cell F1 over the sample's tables; None: no tables
    decorations_read: int | None = None  # None: not measurable (Tesseract prints no boxes)


@dataclass
class Score:
    sample: Sample
    readings: dict[str, Reading]  # engine label -> its reading; "Tesseract" among them


def table_f1(result: OcrResult, sample: Sample) -> float | None:
    """Per truth table, the cell F1 of the found table matching it best; their mean."""
    if not sample.tables:
        return None
    found = [table.rows for table in result.tables]
    return statistics.mean(best_table_score(found, truth.texts()).f1 for truth in sample.tables)


def _covered(box: Box, by: Box) -> float:
    width = min(box[2], by[2]) - max(box[0], by[0])
    height = min(box[3], by[3]) - max(box[1], by[1])
    area = max((box[2] - box[0]) * (box[3] - box[1]), 1)
    return max(width, 0) * max(height, 0) / area


def _reads_decoration(text: str, truth: set[str]) -> bool:
    """A line that is a lone glyph, or a line of the truth with characters stuck to it ("ODaily",
    "● Access"); a misread word ("moming") is the recognizer's error, not a decoration."""
    text = normalise(text)
    if text in truth:
        return False
    return len(text) <= 2 or any(line and line in text for line in truth)


def decorations_read(result: OcrResult, sample: Sample) -> int:
    """Drawn decorations under an output line that reads one (a detector box may reach over a
    checkbox while the text stays exact)."""
    truth = {normalise(line) for line in sample.reference.splitlines()}
    suspects = [line for line in result.lines if _reads_decoration(line.text, truth)]
    return sum(
        1
        for decoration in sample.decorations
        if any(_covered(decoration, line.box) >= DECORATION_COVER for line in suspects)
    )


def desklens_reading(result: OcrResult, seconds: float, sample: Sample) -> Reading:
    return Reading(
        cer(result.text(), sample.reference),
        seconds,
        table_f1(result, sample),
        decorations_read(result, sample),
    )


def tesseract_reading(text: str, seconds: float, sample: Sample) -> Reading:
    return Reading(cer(text, sample.reference), seconds)
