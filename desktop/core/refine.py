"""The VLM on top of the fast OCR: Markdown refinement and OCR-grounded questions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from desktop.core.chat import Answer, Conversation, ImageLike
from desktop.core.presets import get_preset

if TYPE_CHECKING:
    from desktop.core.ocr.models import OcrResult

# Presets whose answer copies the image's text: the fast OCR of it is worth computing as drafts.
COPYING_PRESETS = frozenset({"text", "markdown", "json"})


def refine_to_markdown(
    engine,
    image: ImageLike,
    *,
    max_new_tokens: int | None = None,
    on_text: Callable[[str], None] | None = None,
    ocr: OcrResult | None = None,
) -> Answer:
    """Asks the VLM for the image as Markdown (tables as tables), in a fresh conversation;
    the image's fast-OCR result, when known, drafts the answer (faster, same text)."""
    preset = get_preset("markdown")
    settings = preset.settings_with(max_new_tokens=max_new_tokens)
    hints = draft_hints([ocr], markdown_first=True) if ocr is not None else ()
    return engine.ask(Conversation(), preset.prompt, [image], settings, on_text, hints)


def draft_hints(results: Sequence[OcrResult], *, markdown_first: bool = False) -> list[str]:
    """The fast-OCR text of a turn's images as drafting hints for `VLMEngine.ask`: Markdown
    and plain text (an extraction copies one or the other), the likelier first."""
    hints = []
    for result in results:
        forms = [result.markdown(), result.text()]
        hints += forms if markdown_first else forms[::-1]
    return [hint for hint in dict.fromkeys(hints) if hint.strip()]


def grounded_question(question: str, ocr_texts: Sequence[str]) -> str:
    """The question preceded by the fast-OCR lines of each image (see ocr.grounding_text)."""
    blocks = [
        f"Image {number}:\n{text}" if len(ocr_texts) > 1 else text
        for number, text in enumerate(ocr_texts, start=1)
    ]
    return "\n\n".join([*blocks, f"Question: {question}"])
