"""The decode loop: choose a token, stream it, feed it; with drafts, verify several per call.

Decoding one token reads every weight of the language model once, so a call that feeds the
last token plus k drafted ones costs little more than a call that feeds one. The model's own
choice at each fed position is compared with the draft: the matching prefix is kept, the first
mismatch is replaced by the model's choice (already computed), and the positions after it are
discarded from the KV state. Greedy output is therefore the same as plain decoding, token for
token; sampling (temperature > 0) never drafts (see `drafting_allowed`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from desktop.core.chat import FinishReason, GenerationSettings
from desktop.core.engine.constrained import JsonMatcher
from desktop.core.engine.language import LanguageModel
from desktop.core.engine.sampling import Sampler
from desktop.core.engine.tokens import StreamDecoder, TextCodec

if TYPE_CHECKING:
    from desktop.core.engine.drafting import PromptLookupDrafter


@dataclass
class AnswerRow:
    """One answer being decoded: its choices, end conditions, grammar and streamed text."""

    settings: GenerationSettings
    codec: TextCodec
    prompt_ids: Sequence[int] = ()  # for the repetition penalty
    matcher: JsonMatcher | None = None
    on_text: Callable[[str], None] | None = None
    ids: list[int] = field(default_factory=list)
    finish: FinishReason | None = None  # "eos" | "length" | "stopped" once done

    def __post_init__(self) -> None:
        self._sampler = Sampler(self.settings)
        self._stream = StreamDecoder(self.codec)
        self._eos = frozenset() if self.settings.ignore_eos else self.codec.special.eos
        self._penalised = self.settings.repetition_penalty != 1.0

    @property
    def text(self) -> str:
        return self._stream.text

    @property
    def remaining(self) -> int:
        return self.settings.max_new_tokens - len(self.ids)

    def choose(self, logits: np.ndarray) -> int:
        allowed = self.matcher.allowed() if self.matcher is not None else None
        seen = [*self.prompt_ids, *self.ids] if self._penalised else ()
        return self._sampler.choose(logits, seen, allowed)

    def take(self, token: int) -> bool:
        """Adds a chosen token (streaming its text); False once the answer has ended."""
        if token in self._eos:
            self.finish = "eos"
            return False
        if self.matcher is not None:
            self.matcher.advance(token)
        self.ids.append(token)
        chunk = self._stream.push(token)
        if chunk and self.on_text is not None:
            self.on_text(chunk)
        if self.remaining <= 0:
            self.finish = "length"
            return False
        return True

    def close(self) -> None:
        tail = self._stream.flush()
        if tail and self.on_text is not None:
            self.on_text(tail)


def drafting_allowed(settings: GenerationSettings) -> bool:
    """Greedy only: with sampling, the standard acceptance rule would need the draft's own
    probabilities (none here: lookup drafts are deterministic), and re-sampling a verified
    position would change the random stream. Greedy is what extraction and JSON use."""
    return settings.temperature <= 0


@dataclass
class DecodeResult:
    first_token_at: float | None
    fed_keys: list[int | None]  # per fed position: its token, or None once discarded


def decode_one(
    language: LanguageModel,
    embed: Callable[[np.ndarray], np.ndarray],
    row: AnswerRow,
    logits: np.ndarray,
    position: int,
    stop: threading.Event,
    drafter: PromptLookupDrafter | None = None,
) -> DecodeResult:
    """Decodes `row` from the prompt's last logits; the KV state grows by the fed tokens.

    The last chosen token is never fed (as in plain decoding): the next turn's prompt feeds it.
    """
    result = DecodeResult(None, [])
    pending = logits
    while True:
        if stop.is_set():
            row.finish = "stopped"
            break
        token = row.choose(pending)
        if result.first_token_at is None:
            result.first_token_at = time.perf_counter()
        if not row.take(token) or stop.is_set():
            row.finish = row.finish or "stopped"
            break
        draft = drafter.propose(row.ids)[: row.remaining] if drafter is not None else []
        fed = [token, *draft]
        out = language.feed(
            embed(np.asarray([fed]))[0],
            np.broadcast_to(np.arange(position, position + len(fed)), (3, len(fed))),
            logits=len(fed),
        )
        out = out.reshape(len(fed), -1)
        accepted = _verify(row, draft, out)
        position += 1 + accepted  # rejected positions are discarded: the next token follows
        if drafter is not None and draft:
            drafter.record(len(draft), accepted)
        rejected = len(draft) - accepted
        language.discard(rejected)
        result.fed_keys += [*fed[: 1 + accepted], *([None] * rejected)]
        if row.finish is not None:
            break
        pending = out[accepted]
    row.close()
    return result


def _verify(row: AnswerRow, draft: Sequence[int], logits: np.ndarray) -> int:
    """How many drafted tokens the model itself would have chosen; takes those into the row."""
    for index, token in enumerate(draft):
        if row.choose(logits[index]) != token:
            return index
        if not row.take(token):
            return index + 1
    return len(draft)


def decode_rows(
    language: LanguageModel,
    embed: Callable[[np.ndarray], np.ndarray],
    rows: list[AnswerRow],
    logits: np.ndarray,
    positions: np.ndarray,
    attention: np.ndarray,
    filler: int,
    stop: threading.Event,
) -> float | None:
    """Decodes independent rows side by side, one token each per call (see batch.py); rows
    that have ended are fed `filler`. Returns when the first tokens were chosen."""
    first_token_at = None
    positions = positions.copy()
    while True:
        if stop.is_set():
            _stop_rows(rows)
            break
        tokens = _choose_tokens(rows, logits, filler)
        if first_token_at is None:
            first_token_at = time.perf_counter()
        if all(row.finish for row in rows):
            break
        attention = np.concatenate([attention, np.ones((len(rows), 1), np.int64)], axis=1)
        logits = _feed_tokens(language, embed, tokens, positions, attention)
        positions += 1
    for row in rows:
        row.close()
    return first_token_at


def _stop_rows(rows: Sequence[AnswerRow]) -> None:
    for row in rows:
        row.finish = row.finish or "stopped"


def _choose_tokens(rows: Sequence[AnswerRow], logits: np.ndarray, filler: int) -> list[int]:
    """Each running row's next token, taken into the row; `filler` for rows that have ended."""
    tokens = []
    for index, row in enumerate(rows):
        token = filler
        if row.finish is None:
            token = row.choose(logits[index])
            row.take(token)
        tokens.append(token)
    return tokens


def _feed_tokens(
    language: LanguageModel,
    embed: Callable[[np.ndarray], np.ndarray],
    tokens: Sequence[int],
    positions: np.ndarray,
    attention: np.ndarray,
) -> np.ndarray:
    """Feeds one token per row at `positions`; the next logits [rows, vocab]."""
    count = len(tokens)
    return language.feed_rows(
        embed(np.asarray(tokens, np.int64)[:, None]),
        np.broadcast_to(positions[None, :, None], (3, count, 1)),
        attention,
    )[:, -1]
