"""The one JSON reader for everything DeskLens reads (manifests, model configs, service messages,
stored stats): bounded in size before anything is read and in nesting depth before parsing.

Python's parser recurses once per nesting level, so 200,000 `[` end in a RecursionError that
can take down the thread that parses them; and a 200 MB config.json costs its size several
times over in memory. Both become a `JsonError` (a ValueError) whose text is one sentence.
Standard library only: the OCR client imports this.
"""

from __future__ import annotations

import json
import os
import re
import stat
from itertools import accumulate
from pathlib import Path
from typing import Any

# Model configs and manifests are a few hundred kB at most (tokenizer.json, read elsewhere, is
# the one large JSON file of a model folder).
MAX_BYTES = 16 << 20
# Deeper than any JSON DeskLens writes or a model exporter produces (~6 levels).
MAX_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonError(ValueError):
    """JSON that is not read: too large, too deep or malformed; str() is one sentence."""


def loads(
    data: str | bytes | bytearray,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
    what: str = "The JSON data",
) -> object:
    """`json.loads` that refuses more than `max_bytes` or `max_depth` levels of nesting."""
    if len(data) > max_bytes:
        raise JsonError(
            f"{what} is too large to read ({_size(len(data))}; the limit is {_size(max_bytes)})."
        )
    text = data.decode("utf-8", errors="replace") if isinstance(data, (bytes, bytearray)) else data
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JsonError(f"{what} is nested {depth} levels deep; the limit is {max_depth}.")
    try:
        return json.loads(text)
    except ValueError as exc:
        raise JsonError(f"{what} is not valid JSON ({exc}).") from exc


def stored(data: str | bytes | None) -> object:
    """A JSON value kept in a database (message stats, token ids): None for NULL, and for a
    damaged or oversized value, which must not make its whole chat unreadable."""
    if data is None:
        return None
    try:
        return loads(data)
    except JsonError:
        return None


def read_json(
    path: str | os.PathLike, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> object:
    """A JSON file, its size checked before it is read. OSError for a file that cannot be
    opened; JsonError naming the file for one that is not a regular file or not read."""
    path = Path(path)
    # Non-blocking open: a named pipe would otherwise wait for a writer forever.
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise JsonError(f"{path} is not a regular file.")
        if info.st_size > max_bytes:
            raise JsonError(
                f"{path} is too large to read ({_size(info.st_size)}; the limit is "
                f"{_size(max_bytes)})."
            )
        data = file.read(max_bytes + 1)  # the file may have grown since fstat
    return loads(data, max_bytes=max_bytes, max_depth=max_depth, what=str(path))


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects, brackets inside strings not counted."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    steps = (1 if char in "[{" else -1 for char in brackets)
    return max(accumulate(steps, initial=0))


def _size(count: int) -> str:
    return f"{count / 1e6:,.1f} MB" if count >= 1e6 else f"{count:,} bytes"


def read_json_object(
    path: str | os.PathLike, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> dict[str, Any]:
    """`read_json` of a file that must hold a JSON object (a config, a manifest): JsonError
    naming the file when it holds anything else."""
    return as_object(read_json(path, max_bytes=max_bytes, max_depth=max_depth), str(path))


def as_object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise JsonError(f"{what} does not hold a JSON object.")
    return value
