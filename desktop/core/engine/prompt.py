"""Prompt building: images to embeddings, a conversation to a TokenSequence, ids to embeddings."""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import accumulate

import numpy as np
import openvino as ov

from desktop.core.chat import AnswerStats, ErrorKind, ImageLike, Turn, Unanswerable
from desktop.core.engine.batch import BatchPrompt
from desktop.core.engine.encoder import VisionEncoder
from desktop.core.engine.sequence import ImageEmbedding, TokenSequence
from desktop.core.engine.tokens import TextCodec

RETAIN_AFTER_OVERFLOW = 0.6  # share of the context kept when old turns must go
MEASURED_AT_ONCE = 256  # turns whose texts are encoded in one batch while fitting


@dataclass
class FittedPrompt:
    sequence: TokenSequence
    dropped_turns: int  # oldest turns left out so that prompt + answer fit the context


class PromptBuilder:
    def __init__(
        self,
        codec: TextCodec,
        encoder: VisionEncoder,
        embed_model: ov.CompiledModel,
        max_context_tokens: int,
    ) -> None:
        self.codec = codec
        self.encoder = encoder
        self._embed_request = embed_model.create_infer_request()
        self.max_context_tokens = max_context_tokens

    def embed_images(
        self,
        images: Sequence[ImageLike],
        stats: AnswerStats,
        skip_repeats: bool,
        history: bool = False,
    ) -> list[ImageEmbedding]:
        """Embeddings from the cache or the encoder; earlier turns' cache hits are not counted.
        A new turn's images are counted in `stats` (tokens kept of the whole images')."""
        blocks = []
        t0 = time.perf_counter()
        for item in images:
            cached = self.encoder.cached(item.digest, skip_repeats)
            if cached is not None:
                stats.images_cached += 0 if history else 1
                blocks.append(cached)
            else:
                stats.images_encoded += 1
                blocks.append(self.encoder.encode(item.image, item.digest, skip_repeats))
        stats.vision_s += time.perf_counter() - t0
        if not history:
            stats.visual_tokens = sum(b.tokens for b in blocks)
            stats.visual_tokens_full = sum(b.full_tokens for b in blocks)
        return blocks

    def sequence(
        self,
        turns: Sequence[Turn],
        question: str | None,
        blocks: list[ImageEmbedding],
        stats: AnswerStats,
        skip_repeats: bool,
        known: Mapping[str, list[int]] | None = None,
    ) -> TokenSequence:
        """The prompt of `turns` plus a new user turn with `blocks`; with `question` None it
        ends right after the new turn's images (what can be prefilled before the question).
        Earlier turns' images are read in the same pruning mode as the new ones. `known`:
        texts encoded already (fit's batches)."""
        encode = self.codec.encode if known is None else partial(_encoded, known, self.codec)
        seq = TokenSequence(self.codec.special, encode)
        for turn in turns:
            self._add_turn(seq, turn, stats, skip_repeats)
        seq.open_user_turn(blocks)
        if question is not None:
            seq.close_user_turn(question)
        return seq

    def _add_turn(
        self, seq: TokenSequence, turn: Turn, stats: AnswerStats, skip_repeats: bool
    ) -> None:
        history = self.embed_images(turn.images, stats, skip_repeats, history=True)
        seq.add_user_turn(turn.question, history)
        # An answer from a model server (or the API's caller) came as text: its tokens are
        # read from the text.
        seq.add_answer(turn.answer_ids or seq.encode(turn.answer))

    def fit(
        self,
        turns: Sequence[Turn],
        question: str | None,
        blocks: list[ImageEmbedding],
        answer_budget: int,
        stats: AnswerStats,
        skip_repeats: bool,
    ) -> FittedPrompt:
        """Drops the oldest turns when prompt + answer budget would overflow the context.

        Dropping turns changes the start of the prompt, so the whole rest must be prefilled
        again; it drops down to RETAIN_AFTER_OVERFLOW of the window so that this happens once
        every several turns, not on every turn. A turn's length does not depend on where it
        stands, so the turns are measured once, newest first, and only until the context is
        full: the work is bounded by the context, not by the number of turns sent.
        """
        limit = self.max_context_tokens
        room = limit - answer_budget
        target = min(limit * RETAIN_AFTER_OVERFLOW, room)
        tail = total = len(self.sequence([], question, blocks, stats, skip_repeats))
        sizes: list[int] = []  # of the newest turns, newest first, while all of them fit
        known: dict[str, list[int]] = {}
        for size in self._lengths_newest_first(turns, known, stats, skip_repeats):
            total += size
            if total > room:
                break
            sizes.append(size)
        kept = len(turns)
        if total > room:  # the most newest turns within the target
            kept = bisect_right(list(accumulate(sizes)), target - tail)
        kept_turns = turns[len(turns) - kept :]
        seq = self.sequence(kept_turns, question, blocks, stats, skip_repeats, known)
        if len(seq) + 1 > limit:
            raise Unanswerable(
                f"this question and its images need {len(seq)} tokens, more than the "
                f"{limit}-token context; attach fewer images or lower the image detail",
                ErrorKind.CONTEXT,
            )
        return FittedPrompt(seq, len(turns) - kept)

    def _lengths_newest_first(
        self,
        turns: Sequence[Turn],
        known: dict[str, list[int]],
        stats: AnswerStats,
        skip_repeats: bool,
    ) -> Iterator[int]:
        """Each turn's prompt length, newest first; the texts of MEASURED_AT_ONCE turns are
        encoded in one batch into `known` (a call per text costs ~1 ms, however short)."""
        encode = partial(_encoded, known, self.codec)
        newest_first = list(reversed(turns))
        for start in range(0, len(newest_first), MEASURED_AT_ONCE):
            batch = newest_first[start : start + MEASURED_AT_ONCE]
            known.update(self.codec.encode_many([text for t in batch for text in _texts(t)]))
            for turn in batch:
                part = TokenSequence(self.codec.special, encode)
                self._add_turn(part, turn, stats, skip_repeats)
                yield len(part)

    def batch_row(
        self,
        question: str,
        images: Sequence[ImageLike],
        stats: AnswerStats,
        skip_repeats: bool,
        answer_budget: int,
    ) -> tuple[TokenSequence, BatchPrompt]:
        """One independent one-turn request as a row of a batched prefill."""
        blocks = self.embed_images(images, stats, skip_repeats)
        seq = self.sequence([], question, blocks, stats, skip_repeats)
        if len(seq) + answer_budget > self.max_context_tokens:
            raise ValueError(f"a request needs {len(seq)} tokens, more than the context")
        embeds, mask, deepstack = self.embed_chunk(seq, 0, len(seq))
        stats.input_tokens = len(seq)
        return seq, BatchPrompt(embeds, seq.position_array(0, len(seq)), mask, deepstack)

    def embed_chunk(
        self, seq: TokenSequence, start: int, stop: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Inputs of positions start..stop-1: embeddings (visual rows filled in), the visual
        mask and the deepstack rows."""
        embeds = np.array(self.embed_ids(np.asarray([seq.ids[start:stop]]))[0], copy=True)
        mask, rows, deepstack = seq.visual_rows(start, stop)
        for offset, block_rows in rows:
            embeds[offset : offset + block_rows.shape[0]] = block_rows
        stack = np.concatenate(deepstack, axis=1) if deepstack else None
        return embeds, mask, stack

    def embed_ids(self, ids: np.ndarray) -> np.ndarray:
        """Text embeddings of ids [B, T] -> [B, T, hidden] (a view into the request's output:
        valid until the next call)."""
        self._embed_request.infer({0: np.asarray(ids, dtype=np.int64)})
        return self._embed_request.get_output_tensor(0).data


def _texts(turn: Turn) -> tuple[str, ...]:
    """The texts of a turn that its prompt encodes."""
    return (turn.question,) if turn.answer_ids else (turn.question, turn.answer)


def _encoded(known: Mapping[str, list[int]], codec: TextCodec, text: str) -> list[int]:
    found = known.get(text)
    return list(found) if found is not None else codec.encode(text)
