"""Turns runtime exceptions (OpenVINO's C++ traces in particular) into one readable sentence."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.chat import ErrorKind


def describe(exc: BaseException, limit: int = 300) -> str:
    """The most informative line of an exception message, without C++ source locations."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("Exception from ")]
    text = (useful or lines or [type(exc).__name__])[-1]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_kind_of(exc: BaseException) -> ErrorKind:
    """Why an answer failed, for the history and the API's status code."""
    from desktop.core.chat import ErrorKind, Unanswerable

    return exc.kind if isinstance(exc, Unanswerable) else ErrorKind.FAILED
