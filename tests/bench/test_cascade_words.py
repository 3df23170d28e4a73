"""bench/cascade_words.py: the words of a tiny read that hold an unsure or a dropped character
are cut out by their columns, neighbours run together into one piece, and their reads put back
in place of exactly those words."""

from __future__ import annotations

import numpy as np

from bench.cascade_words import Detail, splice, unsure_spans

TEXT = "ls -wxr now"  # the tiny read of "ls -rwxr now": "r" dropped in the second word


def detail(probabilities: list[float], dropped_at: float | None = None) -> Detail:
    columns = np.arange(len(TEXT), dtype=float) * 10 + 5  # a character every 10 columns
    blanks = np.array([dropped_at]) if dropped_at is not None else np.zeros(0)
    mass = np.array([0.6]) if dropped_at is not None else np.zeros(0)
    return Detail(np.array(probabilities), columns, mass, blanks)


def test_a_word_with_a_dropped_character_is_cut_out_up_to_halfway_to_its_spaces():
    sure = [0.99] * len(TEXT)
    spans = unsure_spans(TEXT, detail(sure, dropped_at=37.0), 110, least=0.8, dropped=0.3)
    assert spans == [(3, 7, 30, 70)]  # "-wxr": from halfway to the space on each side
    assert splice(TEXT, spans, [" -rwxr "]) == "ls -rwxr now"


def test_unsure_neighbours_are_one_piece_and_sure_words_stay():
    probabilities = [0.99] * len(TEXT)
    probabilities[1] = probabilities[4] = 0.5  # "ls" and "-wxr"
    spans = unsure_spans(TEXT, detail(probabilities), 110, least=0.8, dropped=0.3)
    assert spans == [(0, 7, 0, 70)]
    assert splice(TEXT, spans, ["Is -rwxr"]) == "Is -rwxr now"
    assert unsure_spans(TEXT, detail([0.99] * len(TEXT)), 110, 0.8, 0.3) == []
