"""The VLM on top of the fast OCR: Markdown refinement and OCR-grounded questions."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from desktop.core.chat import Answer, Conversation, ImageLike
from desktop.core.presets import get_preset


def refine_to_markdown(
    engine,
    image: ImageLike,
    *,
    max_new_tokens: int | None = None,
    on_text: Callable[[str], None] | None = None,
) -> Answer:
    """Asks the VLM for the image as Markdown (tables as tables), in a fresh conversation."""
    preset = get_preset("markdown")
    settings = preset.settings_with(max_new_tokens=max_new_tokens)
    return engine.ask(Conversation(), preset.prompt, [image], settings, on_text)


def grounded_question(question: str, ocr_texts: Sequence[str]) -> str:
    """The question preceded by the fast-OCR lines of each image (see ocr.grounding_text)."""
    blocks = [
        f"Image {number}:\n{text}" if len(ocr_texts) > 1 else text
        for number, text in enumerate(ocr_texts, start=1)
    ]
    return "\n\n".join([*blocks, f"Question: {question}"])
