"""Turns runtime exceptions (OpenVINO's C++ traces in particular) into one readable sentence."""

from __future__ import annotations


def describe(exc: BaseException, limit: int = 300) -> str:
    """The most informative line of an exception message, without C++ source locations."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    useful = [line for line in lines if not line.startswith("Exception from ")]
    text = (useful or lines or [type(exc).__name__])[-1]
    return text if len(text) <= limit else text[: limit - 1] + "…"
