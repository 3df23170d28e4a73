"""A `response_format` JSON schema checked before it is queued (core/schema_check.py). What
only shows while decoding (a schema that admits no value, or one the decoder cannot follow)
comes back from the engine as its error and is a 400 too (completion._engine_error)."""

from __future__ import annotations

from desktop.core.api.errors import invalid
from desktop.core.schema_check import schema_problem


def check_schema(schema: dict) -> None:
    """Raises ApiError (400, param response_format) for a schema that cannot be used."""
    problem = schema_problem(schema)
    if problem:
        raise invalid(f"The JSON schema of response_format {problem}.", "response_format")
