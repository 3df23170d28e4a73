"""How the recognizer's CTC scores become text: the best path, and its characters' confidence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import cv2
import numpy as np


class CtcRead(NamedTuple):
    text: str
    score: float  # the mean probability of its characters
    least: float  # its least sure character's probability (1.0 for no character)
    steps: np.ndarray  # the step at which each character was emitted
    doubt: bool  # a look-alike no word settles is in doubt (`_settled`)


def ctc_greedy_decode(
    scores: np.ndarray, alphabet: Sequence[str], *, logits: bool
) -> tuple[str, float]:
    """Best path of a T x C score matrix: (text, mean probability of its characters).

    With logits, the probability is computed for the emitted steps only: the full softmax
    over the 18,710 characters at every step cost the model 14% of its time.
    """
    read = ctc_decode(scores, alphabet, logits=logits)
    return read.text, read.score


# A character and its look-alike of the other kind, and the least probability the look-alike
# needs for the neighbours to decide between them: a monospace "O" read "0" ("0ct", "0r") had
# the letter at 0.06-0.38; a zero among digits had it below 0.001.
LOOK_ALIKES = {"0": "O", "O": "0"}
LOOK_ALIKE_FLOOR = 0.02
# The look-alike's probability from which a character that no word settles is in doubt: a
# lone "0" in "Entry 0:" (10 px) was read "O" at 0.69 against 0.31 by the INT8 recognizer,
# and "0" at 0.96 by FP32 (PpOcr reads a line in doubt again with its FP32 recognizer).
LOOK_ALIKE_DOUBT = 0.2


def look_alike_indices(alphabet: Sequence[str]) -> dict[int, int]:
    """The alphabet indices of LOOK_ALIKES, for `ctc_decode(look_alikes=...)`."""
    index = {char: position for position, char in enumerate(alphabet) if char in LOOK_ALIKES}
    return {index[a]: index[b] for a, b in LOOK_ALIKES.items() if a in index and b in index}


def ctc_decode(
    scores: np.ndarray,
    alphabet: Sequence[str],
    *,
    logits: bool,
    look_alikes: dict[int, int] | None = None,
) -> CtcRead:
    """`ctc_greedy_decode`, with its least sure character, the step at which each character
    was emitted, and whether a look-alike is in doubt. With `look_alikes`
    (`look_alike_indices`), a "0" the model was unsure of in a word of letters becomes "O", and
    an unsure "O" in a word of digits "0" (`_settled`); one in a word of neither, with its
    look-alike at LOOK_ALIKE_DOUBT or more, is in doubt."""
    best = scores.argmax(axis=1)
    emitted = best != 0
    emitted[1:] &= best[1:] != best[:-1]
    text = "".join(alphabet[index] for index in best[emitted])
    steps = np.flatnonzero(emitted)
    if not text:
        return CtcRead("", 0.0, 1.0, steps, False)
    chosen = best[steps]
    denominators = _softmax_denominators(scores, steps, chosen) if logits else None
    probabilities = 1.0 / denominators if denominators is not None else scores[steps, chosen]
    doubt = False
    if look_alikes:
        text, doubt = _settled(text, scores, steps, chosen, denominators, look_alikes, alphabet)
    mean, least = float(probabilities.mean()), float(probabilities.min())
    return CtcRead(text, mean, least, steps, doubt)


def _settled(
    text: str,
    scores: np.ndarray,
    steps: np.ndarray,
    best: np.ndarray,
    denominators: np.ndarray | None,
    look_alikes: dict[int, int],
    alphabet: Sequence[str],
) -> tuple[str, bool]:
    """`text` with each look-alike the model gave LOOK_ALIKE_FLOOR or more to the other kind
    turned into the kind the rest of its word is: a letter in a word of letters and no digit
    ("0ct"), a digit in a word of digits and no letter ("2O25"). A sure zero ("0px") stays,
    and so does one in a word of both ("v0.2"); and whether one in a word of neither ("O:")
    had its look-alike at LOOK_ALIKE_DOUBT or more."""
    chars, doubt = list(text), False
    for position, (step, chosen) in enumerate(zip(steps, best, strict=True)):
        other = look_alikes.get(int(chosen))
        if other is None:
            continue
        score = scores[step, other]
        if denominators is not None:  # logits: the other's probability
            score = float(np.exp(score - scores[step, chosen])) / denominators[position]
        if score < LOOK_ALIKE_FLOOR:
            continue
        start, end = text.rfind(" ", 0, position) + 1, text.find(" ", position)
        around = text[start:position] + text[position + 1 : end if end >= 0 else len(text)]
        wanted = alphabet[other]
        same, opposite = (
            (str.isalpha, str.isdigit) if wanted.isalpha() else (str.isdigit, str.isalpha)
        )
        if any(map(same, around)) and not any(map(opposite, around)):
            chars[position] = wanted
        elif not any(map(str.isalnum, around)):
            doubt = doubt or score >= LOOK_ALIKE_DOUBT
    return "".join(chars), doubt


def _softmax_denominators(scores: np.ndarray, steps: np.ndarray, best: np.ndarray) -> np.ndarray:
    """sum(exp(row - its maximum)) of the given rows: 1 / it is the chosen class's probability.

    Row by row through one reused buffer: a copy of all the emitted rows at once (~4 MB per
    line) was paged in afresh on every line, which made decoding 3x slower than the exps.
    """
    buffer = np.empty(scores.shape[1], dtype=np.float32)
    sums = np.empty(len(steps), dtype=np.float64)
    for index, (step, top) in enumerate(zip(steps, scores[steps, best], strict=True)):
        np.subtract(scores[step], top, out=buffer)
        sums[index] = cv2.sumElems(cv2.exp(buffer, buffer))[0]  # OpenCV's exp: 1/10 of NumPy's
    return sums
