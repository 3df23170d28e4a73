"""Is a JSON schema usable for constrained decoding? Checked before an answer starts (API
requests, the user's own prompts), so that a bad regex or a contradiction is a sentence that
names where the schema came from, not a generation failure. Qt-free; llguidance is imported
only when a schema is checked."""

from __future__ import annotations

import json

# Values in the schema (objects, arrays, strings, numbers...): extraction schemas hold tens to
# hundreds; thousands of branches make the grammar slow to build for a large vocabulary.
MAX_SCHEMA_VALUES = 2000


def schema_problem(schema: dict) -> str | None:
    """What makes `schema` unusable ("is too large ...", "cannot be used: ..."), or None."""
    values = _count_values(schema)
    if values > MAX_SCHEMA_VALUES:
        return (
            f"is too large ({values} values; at most {MAX_SCHEMA_VALUES}): describe the answer "
            "with fewer branches or enum values"
        )
    problem = _circular_reference(schema) or _compile_problem(schema)
    return f"cannot be used: {problem}" if problem else None


def _circular_reference(schema: dict) -> str:
    """A `$ref` that leads, through nothing but `$ref`s, back to itself ({"$ref": "#"}): no
    value matches it, and the grammar compiler accepts it only to fail when an answer starts."""
    for start in _nodes(schema):
        node: object = start
        seen: list[int] = []
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and len(node) == 1:
            if id(node) in seen:
                return f"its $ref {node['$ref']!r} refers only to itself"
            seen.append(id(node))
            node = _local(schema, node["$ref"])
    return ""


def _nodes(value: object) -> list[dict]:
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _local(schema: dict, ref: str) -> object:
    """The value a local `$ref` ("#", "#/$defs/a") points at; None for any other."""
    if not ref.startswith("#"):
        return None
    value: object = schema
    for part in filter(None, ref[1:].split("/")):
        key = part.replace("~1", "/").replace("~0", "~")
        value = value.get(key) if isinstance(value, dict) else None
    return value


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
