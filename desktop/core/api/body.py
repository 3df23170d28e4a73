"""A request's JSON body, read within bounds and checked to be text all through.

Python's parser recurses once per nesting level (100,000 `[` end in a RecursionError), and it
accepts lone UTF-16 surrogates (`"\\ud800"`), which are not text: the tokenizer and every
encoder downstream fail on them with their own internals. Both are the client's error, so
both are a 400 here, naming the field, before any route looks at the body.
"""

from __future__ import annotations

from desktop.core import bounded_json
from desktop.core.api.errors import ApiError, invalid

MAX_DEPTH = 64  # deeper than any chat request or JSON schema a client sends


def parse_body(body: bytes, max_bytes: int) -> object:
    """The parsed body; raises ApiError (400) for malformed, too deep or non-text JSON."""
    try:
        data = bounded_json.loads(
            body, max_bytes=max_bytes, max_depth=MAX_DEPTH, what="The request body"
        )
    except bounded_json.JsonError as exc:
        raise invalid(str(exc)) from None
    check_text(data)
    return data


def check_text(data: object) -> None:
    """Raises a 400 for the first string (value or key) holding a lone surrogate."""
    stack: list[tuple[object, str]] = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            _check_string(value, where)
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]") for i, item in enumerate(value))
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_string(key, f"a key of {where}" if where else "a key")
                stack.append((item, f"{where}.{key}" if where else key))


def _check_string(text: str, where: str) -> None:
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = text[exc.start : exc.end]
        raise _surrogate(bad, where) from None


def _surrogate(bad: str, where: str) -> ApiError:
    field = where.removeprefix("a key of ").removeprefix("a key")
    param = field.split(".", 1)[0].split("[", 1)[0] or None
    return invalid(
        f"{where or 'The body'} holds a lone UTF-16 surrogate ({ascii(bad)}), which is not "
        "text: send valid Unicode.",
        param,
    )
