"""A `response_format` JSON schema checked before it is queued: small enough, and one the
constrained decoder (llguidance) can compile. What only shows while decoding (a schema that
admits no value, or one the decoder cannot follow) comes back from the engine as its error
and is a 400 too (completion._engine_error)."""

from __future__ import annotations

import json

from desktop.core.api.errors import ApiError, invalid

# Values in the schema (objects, arrays, strings, numbers...): extraction schemas hold tens to
# hundreds; thousands of branches make the grammar slow to build for a large vocabulary.
MAX_SCHEMA_VALUES = 2000


def check_schema(schema: dict) -> None:
    """Raises ApiError (400, param response_format) for a schema that cannot be used."""
    values = _count_values(schema)
    if values > MAX_SCHEMA_VALUES:
        raise _unusable(
            f"is too large ({values} values; at most {MAX_SCHEMA_VALUES}): describe the answer "
            "with fewer branches or enum values"
        )
    problem = _compile_problem(schema)
    if problem:
        raise _unusable(f"cannot be used: {problem}")


def _count_values(value: object) -> int:
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def _compile_problem(schema: dict) -> str:
    """llguidance's complaint about the schema (regex syntax, contradictions), one line."""
    import llguidance

    try:
        grammar = llguidance.LLMatcher.grammar_from_json_schema(
            json.dumps(schema), defaults={"whitespace_flexible": False}
        )
        message = llguidance.LLMatcher.validate_grammar(grammar)
    except (ValueError, TypeError, RuntimeError) as exc:
        message = str(exc) or type(exc).__name__
    lines = [line.strip() for line in message.splitlines()]
    return " ".join(line for line in lines if line and set(line) != {"^"})[:300]


def _unusable(what: str) -> ApiError:
    return invalid(f"The JSON schema of response_format {what}.", "response_format")
