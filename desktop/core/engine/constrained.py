"""JSON-schema constrained decoding with llguidance: the answer is valid JSON by construction.

The tokenizer is built from the model folder's tokenizer.json (no transformers at runtime); the
matcher masks every token that would break the schema, and allows end-of-turn only once the JSON
is complete.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from desktop.core.chat import ErrorKind, Unanswerable

if TYPE_CHECKING:
    import llguidance


class JsonConstraint:
    """One tokenizer per model (expensive to build); one matcher per answer."""

    def __init__(self, folder: Path, eos_token: int, vocab_size: int) -> None:
        import llguidance

        tokenizer_json = (folder / "tokenizer.json").read_text(encoding="utf-8")
        self._llg = llguidance
        self._tokenizer = llguidance.LLTokenizer(tokenizer_json, eos_token=eos_token)
        self._vocab = vocab_size
        self._eos = eos_token

    def matcher(self, schema: dict) -> JsonMatcher:
        grammar = self._llg.LLMatcher.grammar_from_json_schema(
            json.dumps(schema), defaults={"whitespace_flexible": False}
        )
        matcher = self._llg.LLMatcher(self._tokenizer, grammar)
        if matcher.is_error():
            raise Unanswerable(
                f"the JSON schema cannot be used: {matcher.get_error()}", ErrorKind.SCHEMA
            )
        return JsonMatcher(matcher, self._vocab, self._eos)


class JsonMatcher:
    def __init__(self, matcher: llguidance.LLMatcher, vocab_size: int, eos_token: int) -> None:
        self._matcher = matcher
        self._vocab = vocab_size
        self._eos = eos_token
        self._taken = 0  # tokens consumed so far

    def allowed(self) -> np.ndarray:
        """Boolean mask over the model's vocabulary of the tokens the schema allows next.
        Raises ValueError (naming the JSON schema) when no token may follow: a schema that
        admits no JSON value (e.g. {"$ref": "#"}), or one the matcher cannot follow further."""
        words = np.frombuffer(self._matcher.compute_bitmask(), dtype=np.uint32)
        self._check()
        bits = np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool)
        mask = np.zeros(self._vocab, dtype=bool)
        n = min(self._vocab, bits.shape[0])
        mask[:n] = bits[:n]
        if self._matcher.is_accepting():
            mask[self._eos] = True
        if not mask.any():
            raise Unanswerable(
                "the JSON schema admits no value that could be written here", ErrorKind.SCHEMA
            )
        return mask

    def advance(self, token: int) -> None:
        if not self._matcher.consume_token(token):
            self._check()
            raise Unanswerable(
                "the JSON schema could not be followed past this point", ErrorKind.SCHEMA
            )
        self._taken += 1

    def _check(self) -> None:
        if self._matcher.is_error():
            reason = (self._matcher.get_error().strip().splitlines() or ["no reason given"])[0]
            if not self._taken:  # e.g. {"$ref": "#"}: a schema that only names itself
                raise Unanswerable(
                    f"the JSON schema describes no value to write ({reason[:200]})",
                    ErrorKind.SCHEMA,
                )
            raise Unanswerable(
                f"the JSON schema cannot be followed ({reason[:200]})", ErrorKind.SCHEMA
            )

    @property
    def done(self) -> bool:
        return self._matcher.is_stopped()
