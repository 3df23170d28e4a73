"""DeskLens's own driver for an exported Qwen3-VL folder.

Why not VLMPipeline: it re-runs the vision encoder and the whole prefill on every follow-up. Here
image embeddings are cached by content and the language model's KV state is kept between turns:
a new prompt is compared with what the state holds and only the difference is fed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np
import openvino as ov

from desktop.core.bounded_json import read_json_object
from desktop.core.chat import Answer, AnswerStats, Conversation, GenerationSettings, ImageLike, Turn
from desktop.core.conversation.engine_protocol import Lane, ModelInfo, Preparation
from desktop.core.engine import tuning
from desktop.core.engine.batch import pad_left
from desktop.core.engine.config import EngineConfig, compile_properties, read_vision_spec
from desktop.core.engine.constrained import JsonConstraint, JsonMatcher
from desktop.core.engine.decode import AnswerRow, decode_one, decode_rows, drafting_allowed
from desktop.core.engine.drafting import PromptLookupDrafter
from desktop.core.engine.encoder import VisionEncoder, drop_dense_attention_mask
from desktop.core.engine.lanes import KvLanes
from desktop.core.engine.language import LanguageModel, keep_last_logits
from desktop.core.engine.prompt import PromptBuilder
from desktop.core.engine.residency import settle
from desktop.core.engine.sequence import TokenSequence
from desktop.core.engine.tokens import TextCodec
from desktop.core.engine.tuning import Choice
from desktop.core.engine.vision import visual_token_count
from desktop.core.errors import describe, error_kind_of
from desktop.core.manifest import Manifest, ModelError, verify_model_dir

# Discarded draft positions tolerated in the KV state. Measured (bench/decode_bench.py): a
# masked position costs a decode step what a held one does (~0.012 ms); removing them costs one
# copy of the cache (0.4 s at 2k tokens). Past ~128, a long next answer pays more than the copy.
COMPACT_AFTER_HOLES = 128
VISION_WEIGHTS = [f"openvino_vision_embeddings{part}_model.bin" for part in ("", "_pos", "_merger")]


def _compile(
    core: ov.Core,
    path: Path,
    device: str,
    properties: dict,
    transform: Callable[[ov.Model], ov.Model] | None = None,
) -> ov.CompiledModel:
    model = core.read_model(path)
    return core.compile_model(transform(model) if transform else model, device, properties)


class VLMEngine:
    """Load once, then `ask()` from one worker thread; `stop()` from any thread."""

    def __init__(
        self, folder: Path, config: EngineConfig, manifest: Manifest, choice: Choice | None = None
    ) -> None:
        self.config = config
        self.precision_choice = choice  # the precisions measured on this CPU (tuning.py)
        self._stop = threading.Event()
        core = ov.Core()
        lm_props, vis_props = compile_properties(config)
        device = config.device
        model_config = read_json_object(folder / "config.json")
        vision_cfg, text_cfg = model_config["vision_config"], model_config["text_config"]
        self._hidden = int(text_cfg["hidden_size"])
        self.codec = TextCodec(core, folder)
        embed_model = _compile(
            core, folder / "openvino_text_embeddings_model.xml", device, lm_props
        )
        language_xml = folder / "openvino_language_model.xml"
        language = _compile(core, language_xml, device, lm_props, transform=keep_last_logits)
        deepstack, hidden = len(vision_cfg.get("deepstack_visual_indexes", [])), self._hidden
        # No `self` in the closure: a cycle would keep OpenVINO's threads after release.
        self._lanes = KvLanes(lambda: LanguageModel(language, deepstack, hidden))
        self.language = self._lanes.make()  # the current lane's (OWN, to begin with)
        # Sub-models one at a time: warm up (the runtime copies the weights it needs), then let go
        # of the mapped file, so the two copies of the big weights never sit in memory together.
        if config.warm_up:
            settle(self.language.warm_up, folder, ["openvino_language_model.bin"])
        merger_xml = folder / "openvino_vision_embeddings_merger_model.xml"
        self.encoder = VisionEncoder(
            _compile(core, folder / "openvino_vision_embeddings_model.xml", device, vis_props),
            _compile(core, folder / "openvino_vision_embeddings_pos_model.xml", device, vis_props),
            _compile(core, merger_xml, device, vis_props, transform=drop_dense_attention_mask),
            read_vision_spec(folder, vision_cfg, config),
            cache_size=config.image_cache_size,
        )
        if config.warm_up:
            settle(self.encoder.warm_up, folder, VISION_WEIGHTS)
        self.prompts = PromptBuilder(
            self.codec, self.encoder, embed_model, config.max_context_tokens
        )
        self.info = ModelInfo(
            folder.name, folder, device, manifest.weight_format, manifest, vision=self.encoder.spec,
            precisions=choice.sentence() if choice else "",
        )  # fmt: skip
        # Key of every position the KV state holds, None where a rejected draft was masked out.
        self._kv_keys: list[object | None] = []
        # Introspection for tests and benchmarks: the last prompt as fed, and its prefill logits.
        self.last_sequence: TokenSequence | None = None
        self.last_prefill_logits: np.ndarray | None = None
        self._folder = folder
        self._json: JsonConstraint | None = None  # built on first JSON request (~1 s)

    @classmethod
    def load(cls, folder: str | Path, config: EngineConfig | None = None) -> VLMEngine:
        """Checks the folder (files, sizes, versions) and compiles its sub-models."""
        folder = Path(folder)
        manifest = verify_model_dir(folder)
        try:
            make = partial(cls, folder, manifest=manifest)
            config, choice = tuning.configured(folder, config or EngineConfig(), make)
            return cls(folder, config, manifest, choice)
        except (RuntimeError, KeyError, ValueError, TypeError, AttributeError, OSError) as exc:
            raise ModelError(
                f"The model in {folder} could not be loaded ({describe(exc)}). "
                "Convert or import it again with convert.py."
            ) from exc

    def stop(self) -> None:
        """Ends the current answer at the next token (safe from any thread)."""
        self._stop.set()

    def reset(self) -> None:
        """Forgets the current lane's KV state (its next question re-prefills)."""
        self.language.reset()
        self._kv_keys = []

    def use_lane(self, lane: Lane) -> None:
        """The calls from now on read and keep `lane`'s KV state; the other lane's stays."""
        self.language, self._kv_keys = self._lanes.switch(lane, self.language, self._kv_keys)

    def count_visual_tokens(self, image: ImageLike) -> int:
        """Tokens of the whole image (pruning can only lower what it costs)."""
        return visual_token_count(image.image.size, self.encoder.spec)

    def image_embedding(self, image: ImageLike) -> np.ndarray:
        """The vision encoder's output for the whole image (from the cache once read)."""
        return self.encoder.encode(image.image, image.digest, skip_repeats=False).embeds

    def _skips_repeats(self, settings: GenerationSettings) -> bool:
        chosen = settings.skip_repeats
        return self.config.skip_repeats if chosen is None else chosen

    def ask(
        self,
        conversation: Conversation,
        question: str,
        images: Sequence[ImageLike] = (),
        settings: GenerationSettings | None = None,
        on_text: Callable[[str], None] | None = None,
        hints: Sequence[str] = (),
    ) -> Answer:
        """Answers `question` about `images` in `conversation`, streaming text to `on_text`.

        `hints` are texts the answer is likely to copy (the fast OCR of the images): greedy
        decoding drafts from them and from the prompt, which changes speed, never the answer.
        On success (or a stop after the first token) the turn is appended to the conversation;
        on error or a stop before the first token the conversation is left as it was.
        """
        settings = settings or GenerationSettings()
        self._stop.clear()
        stats = AnswerStats()
        started = time.perf_counter()
        try:
            with self.encoder.reading_at(settings.max_visual_tokens):
                return self._ask(
                    conversation, question, list(images), settings, on_text, hints, stats, started
                )
        except Exception as exc:  # a failed request must never leave a half-updated state
            self.reset()
            stats.total_s = time.perf_counter() - started
            failure, kind = f"Generation failed: {describe(exc)}", error_kind_of(exc)
            return Answer("", "error", stats, error=failure, error_kind=kind)

    def prepare(
        self,
        conversation: Conversation,
        images: Sequence[ImageLike] = (),
        settings: GenerationSettings | None = None,
        cancel: threading.Event | None = None,
    ) -> Preparation:
        """Does the work of the next `ask` that does not depend on its question: encodes
        `images` and feeds the KV state up to the end of the new user turn's images (with no
        images: the conversation's history). A following `ask` with the same conversation and
        images then feeds only the question. `cancel` (any thread) ends it between prefill
        chunks; what was fed stays usable. The answer is the same with or without it.
        """
        settings = settings or GenerationSettings()
        cancel = cancel or threading.Event()
        stats = AnswerStats()
        started = time.perf_counter()
        skip = self._skips_repeats(settings)
        try:  # the images first: a bad one fails here, with the KV state untouched
            with self.encoder.reading_at(settings.max_visual_tokens):
                blocks = self.prompts.embed_images(images, stats, skip)
                seq = self.prompts.fit(conversation.turns, None, blocks, settings.max_new_tokens,
                                       stats, skip).sequence  # fmt: skip
        except Exception as exc:
            error = f"Reading the images failed: {describe(exc)}"
            return self._prepared("error", stats, started, error)
        if cancel.is_set():
            return self._prepared("cancelled", stats, started)
        try:
            reuse = self._reuse(seq, len(seq))
            t0 = time.perf_counter()
            done = self._prefill(seq, reuse, cancel) is not None or reuse == len(seq)
            stats.prefill_s = time.perf_counter() - t0
        except Exception as exc:  # nothing half-fed may stay
            self.reset()
            return self._prepared("error", stats, started, f"Reading ahead failed: {describe(exc)}")
        stats.input_tokens = self._held_tokens - reuse
        return self._prepared("ready" if done else "cancelled", stats, started)

    def _prepared(
        self, status: str, stats: AnswerStats, started: float, error: str | None = None
    ) -> Preparation:
        stats.total_s = time.perf_counter() - started
        return Preparation(status, stats, self._held_tokens, error)

    @property
    def _held_tokens(self) -> int:
        """Prompt positions the KV state holds (discarded draft positions not counted)."""
        return self.language.kv_length - self.language.discarded

    def ask_each(
        self,
        requests: Sequence[tuple[str, Sequence[ImageLike]]],
        settings: GenerationSettings | None = None,
    ) -> list[Answer]:
        """Answers independent one-turn questions (each with its own images) side by side.

        Decoding runs for all of them at once (see batch.py), so N screenshots are extracted in
        much less than N times the time of one. Conversations are untouched; the KV state is
        cleared afterwards. Not for JSON-constrained answers. `stop()` ends all of them.
        """
        settings = settings or GenerationSettings()
        self._stop.clear()
        started = time.perf_counter()
        stats = [AnswerStats() for _ in requests]
        try:
            if settings.json_schema:
                raise ValueError("JSON-constrained answers are answered one at a time")
            with self.encoder.reading_at(settings.max_visual_tokens):
                return self._ask_each(list(requests), settings, stats, started)
        except Exception as exc:
            total = time.perf_counter() - started
            for item in stats:
                item.total_s = total
            error, kind = f"Generation failed: {describe(exc)}", error_kind_of(exc)
            return [Answer("", "error", item, error=error, error_kind=kind) for item in stats]
        finally:
            self.reset()  # the batch's KV state belongs to no conversation

    def _reuse(self, seq: TokenSequence, most: int) -> int:
        """Keeps the longest prefix of `seq` (at most `most` positions) that the KV state holds
        and cuts what follows it; returns its length."""
        reuse, kept = seq.held_prefix(self._kv_keys, most)
        self.language.truncate(kept)
        del self._kv_keys[kept:]
        return reuse

    def _prefill(
        self, seq: TokenSequence, start: int, cancel: threading.Event | None = None
    ) -> np.ndarray | None:
        """Feeds seq[start:], in chunks when it can be cancelled; the last chunk's logits, or
        None when `cancel` was set before the end (the fed chunks stay in the state, recorded
        in _kv_keys)."""
        chunk = max(1, self.config.prefill_chunk_tokens) if cancel is not None else len(seq)
        logits = None
        for lo in range(start, len(seq), chunk):
            if cancel is not None and cancel.is_set():
                return None
            hi = min(lo + chunk, len(seq))
            embeds, mask, deepstack = self.prompts.embed_chunk(seq, lo, hi)
            logits = self.language.feed(embeds, seq.position_array(lo, hi), mask, deepstack)
            self._kv_keys.extend(seq.keys[lo:hi])
        return logits

    def _compact_if_sparse(self) -> None:
        """Rejected drafts stay in the state, masked out, and the next prompt skips them (a
        copy of the cache after every answer would cost 0.2-0.4 s at 1-2k tokens); once there
        are COMPACT_AFTER_HOLES, they go in one copy."""
        if self.language.discarded > COMPACT_AFTER_HOLES:
            self.language.compact()
            self._kv_keys = [key for key in self._kv_keys if key is not None]

    def _json_matcher(self, schema: dict, vocab_size: int) -> JsonMatcher:
        if self._json is None:
            self._json = JsonConstraint(self._folder, self.codec.special.im_end, vocab_size)
        return self._json.matcher(schema)

    def _drafter(
        self, seq: TokenSequence, hints: Sequence[str], settings: GenerationSettings
    ) -> PromptLookupDrafter | None:
        if not (settings.draft and drafting_allowed(settings)):
            return None
        special = self.codec.special
        ignore = frozenset({special.image_pad, special.vision_start, special.vision_end})
        drafter = PromptLookupDrafter([self.codec.encode(h) for h in hints if h], ignore=ignore)
        drafter.start(seq.ids)
        return drafter

    def _ask(
        self,
        conversation: Conversation,
        question: str,
        images: list[ImageLike],
        settings: GenerationSettings,
        on_text: Callable[[str], None] | None,
        hints: Sequence[str],
        stats: AnswerStats,
        started: float,
    ) -> Answer:
        skip = self._skips_repeats(settings)
        blocks = self.prompts.embed_images(images, stats, skip)
        fitted = self.prompts.fit(
            conversation.turns, question, blocks, settings.max_new_tokens, stats, skip
        )
        if fitted.dropped_turns:
            stats.dropped_turns = fitted.dropped_turns
            del conversation.turns[: fitted.dropped_turns]
            conversation.notes.append(
                f"The {fitted.dropped_turns} oldest turn(s) were dropped to fit the context window."
            )
        seq = fitted.sequence
        # Reuse the KV state for the longest prefix it already holds; feed only the rest.
        reuse = self._reuse(seq, len(seq) - 1)
        t0 = time.perf_counter()
        logits = self._prefill(seq, reuse)  # one call: chunks would cost time (config.py)
        if logits is None:  # only a cancelled prefill has none, and this one has no cancel
            raise RuntimeError("the prefill returned no logits")
        stats.prefill_s = time.perf_counter() - t0
        stats.input_tokens = len(seq) - reuse
        self.last_sequence, self.last_prefill_logits = seq, logits

        schema = settings.json_schema
        matcher = self._json_matcher(schema, logits.shape[0]) if schema else None
        row = AnswerRow(settings, self.codec, seq.ids, matcher, on_text)
        drafter = self._drafter(seq, hints, settings)
        result = decode_one(
            self.language, self.prompts.embed_ids, row, logits, seq.next_position, self._stop,
            drafter,
        )  # fmt: skip
        self._kv_keys += result.fed_keys
        self._compact_if_sparse()
        if drafter is not None:
            stats.drafted_tokens = drafter.stats.drafted
            stats.accepted_tokens = drafter.stats.accepted
        stats.close(
            len(row.ids), self._held_tokens, started, result.first_token_at, time.perf_counter()
        )
        if row.finish == "stopped" and not row.ids:
            return Answer("", "stopped", stats)  # nothing said: the history stays as it was
        conversation.turns.append(
            Turn(question, list(images), row.text, row.ids, stopped=row.finish == "stopped")
        )
        return Answer(row.text, row.finish or "length", stats)

    def _ask_each(
        self,
        requests: list[tuple[str, Sequence[ImageLike]]],
        settings: GenerationSettings,
        stats: list[AnswerStats],
        started: float,
    ) -> list[Answer]:
        skip, budget = self._skips_repeats(settings), settings.max_new_tokens
        built = [
            self.prompts.batch_row(question, images, item, skip, budget)
            for (question, images), item in zip(requests, stats, strict=True)
        ]
        sequences = [seq for seq, _ in built]
        batch = pad_left([row for _, row in built])
        self.reset()
        t0 = time.perf_counter()
        logits = self.language.feed_rows(
            batch.embeds, batch.positions, batch.attention_mask, batch.visual_mask, batch.deepstack
        )[:, -1]
        prefill_s = time.perf_counter() - t0
        rows = [AnswerRow(settings, self.codec, seq.ids) for seq in sequences]
        first_token_at = decode_rows(
            self.language, self.prompts.embed_ids, rows, logits,
            np.asarray([seq.next_position for seq in sequences], np.int64), batch.attention_mask,
            self.codec.special.im_end, self._stop,  # im_end: fed for rows already finished
        )  # fmt: skip
        now = time.perf_counter()
        answers = []
        for row, item in zip(rows, stats, strict=True):
            item.prefill_s = prefill_s
            item.close(len(row.ids), self._held_tokens, started, first_token_at, now)
            answers.append(Answer(row.text, row.finish or "length", item))
        return answers
