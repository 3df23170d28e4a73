"""How close an OCR result is to the known truth of a rendered page: the character error rate
(CER) of the text and a cell-level score of table structure. Shared by the benchmark and the
tests, so both measure the same thing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CJK_CHAR = r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]"


def normalise(text: str) -> str:
    """Layout spacing is not scored: NFKC, whitespace runs (tabs too) become one space, blank
    lines go, and spaces next to CJK characters are dropped (Tesseract spaces them out)."""
    text = unicodedata.normalize("NFKC", text)
    lines = [re.sub(r"\s+", " ", line).strip() for line in text.splitlines()]
    text = "\n".join(line for line in lines if line)
    return re.sub(rf"(?<={CJK_CHAR}) | (?={CJK_CHAR})", "", text)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time (insertions via a running minimum)."""
    if not a or not b:
        return len(a) + len(b)
    codes_b = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    offsets = np.arange(len(b) + 1)
    row = offsets.copy()
    for index, char in enumerate(a, start=1):
        substitution = row[:-1] + (codes_b != ord(char))
        current = np.empty_like(row)
        current[0] = index
        current[1:] = np.minimum(row[1:] + 1, substitution)
        row = np.minimum.accumulate(current - offsets) + offsets
    return int(row[-1])


def cer(hypothesis: str, reference: str) -> float:
    """Edit distance over the reference length, both normalised; line breaks count, so the
    reading order does too."""
    ref = normalise(reference)
    return edit_distance(normalise(hypothesis), ref) / max(len(ref), 1)


@dataclass(frozen=True)
class CellScore:
    """Cell-level precision and recall of (row, column, text) triples."""

    matched: int
    found: int  # non-empty cells the OCR reported
    expected: int  # non-empty cells of the truth

    @property
    def precision(self) -> float:
        return self.matched / self.found if self.found else float(self.expected == 0)

    @property
    def recall(self) -> float:
        return self.matched / self.expected if self.expected else 1.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


def _cells(rows: Sequence[Sequence[str]]) -> set[tuple[int, int, str]]:
    return {
        (r, c, normalise(text))
        for r, row in enumerate(rows)
        for c, text in enumerate(row)
        if normalise(text)
    }


def table_cells_score(found: Sequence[Sequence[str]], truth: Sequence[Sequence[str]]) -> CellScore:
    """A cell counts when its text sits at the same row and column as in the truth: a merged
    or split column, a missing header or an extra row all cost the cells they shift."""
    found_cells, truth_cells = _cells(found), _cells(truth)
    return CellScore(len(found_cells & truth_cells), len(found_cells), len(truth_cells))


def best_table_score(
    tables: Sequence[Sequence[Sequence[str]]], truth: Sequence[Sequence[str]]
) -> CellScore:
    """The score of the found table that matches the truth best (none found: recall 0)."""
    scores = [table_cells_score(table, truth) for table in tables]
    return max(scores, key=lambda s: (s.f1, -s.found), default=table_cells_score([], truth))
