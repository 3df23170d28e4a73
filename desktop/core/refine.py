"""The VLM on top of the fast OCR: Markdown refinement and OCR-grounded questions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from desktop.core.chat import Answer
from desktop.core.draft_texts import (
    draft_hints,
    joined_paragraphs,
    ocr_source_texts,
    plain_ocr_text,
)
from desktop.core.presets import get_preset

if TYPE_CHECKING:
    from desktop.core.engine import VLMEngine
    from desktop.core.images import LoadedImage
    from desktop.core.ocr.models import OcrResult

__all__ = [  # the drafting texts live in draft_texts.py (the service uses them too)
    "COPYING_PRESETS", "draft_hints", "joined_paragraphs", "ocr_source_texts", "plain_ocr_text",
    "refine_to_markdown",
]  # fmt: skip

# Presets whose answer copies the image's text: the fast OCR of it is worth computing as drafts.
COPYING_PRESETS = frozenset({"text", "markdown", "json"})


def refine_to_markdown(
    engine: VLMEngine,
    image: LoadedImage,
    *,
    max_new_tokens: int | None = None,
    on_text: Callable[[str], None] | None = None,
    ocr: OcrResult | None = None,
) -> Answer:
    """Asks the VLM for the image as Markdown (tables as tables), in a fresh conversation;
    the image's fast-OCR result, when known, drafts the answer (faster, same text)."""
    from desktop.core.conversation import AskRequest, ConversationService

    preset = get_preset("markdown")
    settings = preset.settings_with(max_new_tokens=max_new_tokens)
    hints = tuple(draft_hints([ocr])) if ocr is not None else ()
    request = AskRequest(preset.prompt, (image,), settings, hints=hints)
    return ConversationService(engine).ask(request, on_text=on_text).answer
