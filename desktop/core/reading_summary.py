"""An answer's figures in words a user understands, for its card and the chat export (one
wording: the GUI and the exported document call the same function).

The model reads an image as blocks of about 32x32 pixels (one visual token each). With
"Skip repeated areas" on, a block that repeats its neighbour (an empty margin, a flat
toolbar) is not read again: the card says how many were read, so a user sees what the speed
came from rather than a "tokens kept" figure.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from desktop.core.chat import AnswerStats

_FIELDS = {field.name for field in fields(AnswerStats)}


def image_reading(stats: AnswerStats) -> str:
    """ "read 215 of 682 image blocks; the rest repeat a neighbour", "read all 880 image
    blocks", or "" for an answer without images (or a model server's: its own business)."""
    kept, whole = stats.visual_tokens, stats.visual_tokens_full
    if stats.server or not kept:
        return ""
    if kept < whole:
        return f"read {kept} of {whole} image blocks; the rest repeat a neighbour"
    return f"read all {kept} image blocks"


def answer_summary(stats: AnswerStats) -> str:
    """The answer's line: where it came from, how much of the images it read and how long
    reading took, the time to its first token and its speed."""
    parts = [f"from server {stats.server}"] if stats.server else []
    reading = image_reading(stats)
    if reading:
        parts.append(reading)
    if not stats.server and stats.vision_s + stats.prefill_s >= 0.005:
        parts.append(f"reading {stats.vision_s + stats.prefill_s:.2f} s")
    if stats.ttft_s:
        parts.append(f"{stats.ttft_s:.2f} s to first token")
    if stats.tokens_per_s:
        parts.append(f"{stats.tokens_per_s:.1f} tokens/s")
    if stats.generated_tokens:
        parts.append(f"{stats.generated_tokens} tokens")
    if stats.drafted_tokens:  # this answer's own figure (each answer drafts afresh)
        parts.append(f"{stats.accepted_tokens}/{stats.drafted_tokens} drafted tokens accepted")
    return " · ".join(parts)


def stats_of(data: dict[str, Any] | None) -> AnswerStats | None:
    """A stored answer's figures (the history keeps them as a JSON object); None without."""
    if not data:
        return None
    return AnswerStats(**{key: value for key, value in data.items() if key in _FIELDS})
