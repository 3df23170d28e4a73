"""Prompt-lookup drafting: draft tokens for speculative decoding without a draft model.

Answers that extract text copy it: from the image (whose fast-OCR text is an almost free second
reading of it), from the prompt, or from earlier in the answer. The drafter looks the answer's
last few tokens up in those streams and proposes what followed them there; the engine verifies
the draft in one language-model call and keeps the longest prefix the model agrees with, so a
wrong draft costs a little compute, never a different answer.

The draft length k starts at 4 and follows Hugging Face assisted generation's rule: +2 after a
fully accepted draft, -1 after a rejection, within [k_min, k_max] = [1, 32]. On the extraction
pairs of bench/draft_bench.py it beat doubling / falling to accepted + 1, and +1/-1, and fixed
k where drafts fail (bench/RESULTS.md); the lookup and re-sync choices below were measured there.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

MAX_PAUSE = 31  # steps: at zero acceptance at most one call in 32 carries a (1-token) draft
# (k, drafted, accepted) -> the next k, before clamping to [k_min, k_max].
KRule = Callable[[int, int, int], int]
# Which occurrence of a matched n-gram to continue from: the first one after the position the
# last draft came from in that stream ("next": text is read in order), or the last one ("last").
Pick = Literal["next", "last"]
# After a rejected token that the stream does not have nearby: read on past it (the OCR misread
# it: "substitution"), or from it (the model inserted a token: "insertion"), or do not guess.
Guess = Literal["substitution", "insertion", "none"]


def add_two_drop_one(k: int, drafted: int, accepted: int) -> int:
    """Hugging Face assisted generation's rule: +2 after a full accept, -1 otherwise."""
    return k + 2 if accepted >= drafted else k - 1


@dataclass
class DraftStats:
    drafted: int = 0  # tokens proposed
    accepted: int = 0  # of those, accepted by the model
    steps: int = 0  # verification calls that carried a draft

    @property
    def acceptance(self) -> float:
        return self.accepted / self.drafted if self.drafted else 0.0


class _Stream:
    """Tokens with an incremental index: n-gram -> positions just after each occurrence."""

    def __init__(self, sizes: range, ignore: frozenset[int]) -> None:
        self.tokens: list[int] = []
        self.index: dict[tuple[int, ...], list[int]] = {}
        self._sizes = sizes  # ascending
        self._ignore = ignore
        self._clean_run = 0  # tokens at the end since the last ignored one

    def extend(self, tokens: Sequence[int]) -> None:
        for token in tokens:
            token = int(token)
            self.tokens.append(token)
            if token in self._ignore:
                self._clean_run = 0
                continue
            self._clean_run += 1
            end = len(self.tokens)
            for n in self._sizes:
                if n > self._clean_run:
                    break
                self.index.setdefault(tuple(self.tokens[end - n : end]), []).append(end)

    def continuation(self, start: int, k: int) -> list[int]:
        """Up to k tokens from `start`, cut before the first ignored id."""
        out: list[int] = []
        for token in self.tokens[start : start + k]:
            if token in self._ignore:
                break
            out.append(token)
        return out


@dataclass
class _Draft:
    stream: _Stream
    start: int  # position in stream of the draft's first token
    answer_length: int  # the answer's length when it was proposed
    guessed: bool = False  # proposed by a guess (see Guess)


class PromptLookupDrafter:
    """Drafts for one answer at a time: `start` per answer, then per decode step `propose`,
    verify, `record`. Never proposes an id from `ignore` (e.g. image pads)."""

    def __init__(
        self,
        sources: Sequence[Sequence[int]] = (),
        *,
        max_ngram: int = 3,
        min_ngram: int = 1,
        # Measured (bench/draft_bench.py with the engine's call costs): from 4 to 32 gives 5.2x
        # plain decoding on the text pairs (from 8 to 16: 4.6x); starting at 4 rather than 8
        # keeps an answer that copies nothing from paying for long first drafts.
        k: int = 4,
        k_min: int = 1,
        k_max: int = 32,  # the verification cost is measured up to 32 fed tokens
        ignore: frozenset[int] = frozenset(),
        rule: KRule = add_two_drop_one,
        pick: Pick = "next",
        resync_window: int = 3,
        guess: Guess = "substitution",
    ) -> None:
        self._sizes = range(max(1, min_ngram), max(1, min_ngram, max_ngram) + 1)
        self._ignore = frozenset(ignore)
        self.k_min, self.k_max = max(1, k_min), max(1, k_min, k_max)
        self.k_start = min(max(k, self.k_min), self.k_max)
        self.k = self.k_start
        self._rule, self._pick = rule, pick
        # After a rejection the model's own token is looked for this many positions ahead in
        # the stream (OCR that split a word differently, or read a stray token); without a hit
        # and without a longer n-gram match elsewhere, a guess (see Guess).
        self._resync_window = resync_window
        self._guess = guess
        self._sources: list[_Stream] = []
        for ids in sources:
            stream = _Stream(self._sizes, self._ignore)
            stream.extend(ids)
            if stream.tokens:
                self._sources.append(stream)
        self.stats = DraftStats()
        self.start(())

    def start(self, prompt_ids: Sequence[int]) -> None:
        """Begins an answer to this prompt (as fed, image pads included): resets k and stats."""
        self._prompt = [int(t) for t in prompt_ids]
        self._context = _Stream(self._sizes, self._ignore)  # prompt + answer so far
        self._context.extend(self._prompt)
        self._last: _Draft | None = None  # the last proposal
        # Where the model's next own token is expected in the stream of the last verified
        # draft, and the answer length at which that holds.
        self._at: _Draft | None = None
        self.k = self.k_start
        self.stats = DraftStats()
        self._misses = 0  # drafts in a row of which nothing was accepted
        self._pause = 0  # steps left without drafting

    def propose(self, answer_ids: Sequence[int]) -> list[int]:
        """Up to k tokens to try after `answer_ids` (which only ever grows); [] for no match."""
        self._follow(answer_ids)
        self._last = None
        if self._pause > 0:
            self._pause -= 1
            return []
        answer_length = len(answer_ids)
        strong, weak = [n for n in reversed(self._sizes) if n > 1], [1] if 1 in self._sizes else []
        draft = (
            self._continued(answer_length)
            or self._looked_up(strong)
            or self._guessed(answer_length)
            or self._looked_up(weak)
        )
        if draft is None:
            return []
        tokens = draft.stream.continuation(draft.start, self.k)
        if tokens:
            draft.answer_length = answer_length
            self._last = draft
        return tokens

    def record(self, drafted: int, accepted: int) -> None:
        """The outcome of the last proposal: adapts k and counts."""
        if drafted <= 0:
            return
        accepted = min(max(accepted, 0), drafted)
        self.stats.drafted += drafted
        self.stats.accepted += accepted
        self.stats.steps += 1
        self.k = min(max(self._rule(self.k, drafted, accepted), self.k_min), self.k_max)
        # Where drafts keep failing (an answer that copies nothing), each still costs a wider
        # verification call: back off, 0, 1, 2, 3 ... steps after each miss in a row (linear:
        # on bench/draft_bench.py's Markdown pairs doubling lost 4 % more tokens per step).
        self._misses = 0 if accepted else self._misses + 1
        self._pause = min(max(self._misses - 1, 0), MAX_PAUSE)
        last, self._last = self._last, None
        if last is not None:
            # Where the model's next own token is expected: the first rejected draft token,
            # or the token after a fully accepted draft.
            self._at = _Draft(
                last.stream,
                last.start + accepted,
                last.answer_length + accepted + 1,
                guessed=last.guessed and accepted == 0,
            )

    # -- lookup -------------------------------------------------------------------------------

    def _follow(self, answer_ids: Sequence[int]) -> None:
        """Indexes the answer's new tokens; rebuilds if it shrank (it should not)."""
        known = len(self._context.tokens) - len(self._prompt)
        if len(answer_ids) < known:
            self._context = _Stream(self._sizes, self._ignore)
            self._context.extend(self._prompt)
            self._at, known = None, 0
        self._context.extend(answer_ids[known:])

    def _expected(self, answer_length: int) -> _Draft | None:
        at = self._at
        return at if at is not None and at.answer_length == answer_length else None

    def _continued(self, answer_length: int) -> _Draft | None:
        """Keeps reading the stream of the last draft where the model's own token is found a
        few positions ahead (OCR that split or merged a word differently, or an extra token)."""
        at = self._expected(answer_length)
        if at is None:
            return None
        window = at.stream.tokens[at.start : at.start + self._resync_window]
        token = self._context.tokens[-1]
        return _Draft(at.stream, at.start + window.index(token) + 1, 0) if token in window else None

    def _guessed(self, answer_length: int) -> _Draft | None:
        """Reads on past the rejected token or from it (see Guess); not after a guess that
        failed outright."""
        at = self._expected(answer_length)
        if self._guess == "none" or at is None or at.guessed:
            return None
        skip = 1 if self._guess == "substitution" else 0
        return _Draft(at.stream, at.start + skip, 0, guessed=True)

    def _looked_up(self, sizes: Sequence[int]) -> _Draft | None:
        """The longest suffix n-gram of prompt + answer found in a source, the prompt or the
        answer (in that order of preference), and the position after it."""
        tokens = self._context.tokens
        prompt_end, end = len(self._prompt), len(tokens)
        for n in sizes:
            if n > end:
                continue
            key = tuple(tokens[end - n :])
            for stream in self._sources:
                found = self._choose(stream, stream.index.get(key), 0, len(stream.tokens) - 1)
                if found is not None:
                    return _Draft(stream, found, 0)
            # The context's own last occurrence is the suffix itself: nothing follows it.
            positions = self._context.index.get(key)
            for low, high in ((0, prompt_end), (prompt_end + 1, end - 1)):
                found = self._choose(self._context, positions, low, high)
                if found is not None:
                    return _Draft(self._context, found, 0)
        return None

    def _choose(
        self, stream: _Stream, positions: list[int] | None, low: int, high: int
    ) -> int | None:
        """An occurrence's end within [low, high], by the pick rule."""
        if not positions:
            return None
        first, last = bisect.bisect_left(positions, low), bisect.bisect_right(positions, high)
        if first >= last:
            return None
        if self._pick == "last":
            return positions[last - 1]
        if self._at is not None and self._at.stream is stream:
            # Read on from where the model's next token was expected in this stream.
            later = bisect.bisect_left(positions, self._at.start, first, last)
            if later < last:
                return positions[later]
        return positions[first]
