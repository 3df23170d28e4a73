"""Tokenizer, detokenizer and the chat-format token ids, on openvino-tokenizers models."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov
import openvino_tokenizers  # noqa: F401  (registers the tokenizer ops with new ov.Core objects)

from desktop.core.bounded_json import read_json_object

ENCODE_CACHE_SIZE = 1024
# encode_many pads a batch to its longest text: a batch holds at most this many characters
# once padded (a call costs ~1 ms however short its text, so 2,000 turns one by one took 4 s).
BATCH_CHARS = 1 << 20


@dataclass(frozen=True)
class SpecialIds:
    im_start: int
    im_end: int
    vision_start: int
    vision_end: int
    image_pad: int
    eos: frozenset[int]


def read_special_ids(folder: Path) -> SpecialIds:
    """Ids of the chat markers, from the exported tokenizer config and model config."""
    config = read_json_object(folder / "config.json")
    by_text: dict[str, int] = {}
    tok_config = folder / "tokenizer_config.json"
    if tok_config.is_file():
        for token_id, info in read_json_object(tok_config).get("added_tokens_decoder", {}).items():
            by_text[info["content"]] = int(token_id)
    im_end = by_text["<|im_end|>"]
    eos = {im_end}
    for source in (config.get("eos_token_id"), _generation_eos(folder)):
        if isinstance(source, int):
            eos.add(source)
        elif isinstance(source, list):
            eos.update(int(x) for x in source)
    return SpecialIds(
        im_start=by_text["<|im_start|>"],
        im_end=im_end,
        vision_start=int(config["vision_start_token_id"]),
        vision_end=int(config["vision_end_token_id"]),
        image_pad=int(config["image_token_id"]),
        eos=frozenset(eos),
    )


def _generation_eos(folder: Path) -> object:  # an id, a list of ids or None
    path = folder / "generation_config.json"
    return read_json_object(path).get("eos_token_id") if path.is_file() else None


class TextCodec:
    """Plain text <-> token ids. Chat markers are inserted as ids, never parsed from text."""

    def __init__(self, core: ov.Core, folder: Path) -> None:
        self._tokenize = core.compile_model(folder / "openvino_tokenizer.xml", "CPU")
        self._detokenize = core.compile_model(folder / "openvino_detokenizer.xml", "CPU")
        self.special = read_special_ids(folder)
        # Every turn rebuilds the conversation's prompt: chat markers and earlier questions
        # recur each time, so their ids are kept (bounded, least recently used first out).
        self._cache: OrderedDict[str, list[int]] = OrderedDict()

    def encode(self, text: str) -> list[int]:
        if not text:
            return []
        cached = self._cache.get(text)
        if cached is None:
            result = self._tokenize([text])
            cached = [int(x) for x in result["input_ids"][0]]
            self._cache[text] = cached
            if len(self._cache) > ENCODE_CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(text)
        return list(cached)

    def encode_many(self, texts: Sequence[str]) -> dict[str, list[int]]:
        """The ids of each text, as `encode` gives them, in a few tokenizer calls: texts of
        like length are batched together (the batch is padded), shortest first."""
        found: dict[str, list[int]] = {"": []}
        pending = sorted({text for text in texts if text}, key=len)
        while pending:
            count = 1
            while count < len(pending) and (count + 1) * len(pending[count]) <= BATCH_CHARS:
                count += 1
            batch, pending = pending[:count], pending[count:]
            result = self._tokenize(batch)
            for text, ids, mask in zip(
                batch, result["input_ids"], result["attention_mask"], strict=True
            ):
                found[text] = [int(x) for x in ids[mask.astype(bool)]]
        return found

    def decode(self, ids: list[int]) -> str:
        if not ids:
            return ""
        result = self._detokenize(np.asarray([ids], dtype=np.int64))
        return str(result["string_output"][0])


class StreamDecoder:
    """Turns a growing list of token ids into text chunks made of whole characters only.

    A byte-level BPE token can end in the middle of a multi-byte UTF-8 character; the
    detokenizer then yields U+FFFD, so such a tail is held back until a later token completes it.
    Only a short window of ids is decoded per token (prefix/read offsets), so cost stays flat.
    """

    def __init__(self, codec: TextCodec) -> None:
        self._codec = codec
        self._ids: list[int] = []
        self._prefix = 0  # window start: ids before it are settled
        self._read = 0  # ids up to here have been emitted
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def _step(self, final: bool) -> str:
        settled = self._codec.decode(self._ids[self._prefix : self._read])
        window = self._codec.decode(self._ids[self._prefix :])
        if len(window) <= len(settled) or (window.endswith("\ufffd") and not final):
            return ""
        chunk = window[len(settled) :]
        self._prefix, self._read = self._read, len(self._ids)
        self._parts.append(chunk)
        return chunk

    def push(self, token_id: int) -> str:
        self._ids.append(token_id)
        return self._step(final=False)

    def flush(self) -> str:
        """Whatever is left at the end (a truly invalid tail is shown as U+FFFD)."""
        return self._step(final=True)
