"""The VLM on top of the fast OCR: Markdown refinement and OCR-grounded questions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from desktop.core.chat import Answer
from desktop.core.presets import get_preset

if TYPE_CHECKING:
    from desktop.core.engine import VLMEngine
    from desktop.core.images import LoadedImage
    from desktop.core.ocr.models import OcrResult

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


def draft_hints(results: Sequence[OcrResult]) -> list[str]:
    """The fast-OCR text of a turn's images as drafting hints for `VLMEngine.ask`."""
    return [
        form for result in results for form in ocr_source_texts(result.text(), result.markdown())
    ]


def plain_ocr_text(text: str) -> str:
    """OCR text with a space between table cells (not a tab) and no blank lines: the form a
    model tends to write extracted text in (and its tokens differ: "\\t"+"North" vs " North")."""
    return "\n".join(" ".join(line.split("\t")) for line in text.splitlines() if line.strip())


def joined_paragraphs(markdown: str) -> str:
    """Markdown with each paragraph's wrapped lines joined into one line (as models write
    Markdown); tables, lists, headings and code keep their lines."""
    blocks = []
    for block in markdown.split("\n\n"):
        lines = block.splitlines()
        if not lines or any(line.lstrip().startswith(MARKDOWN_MARKS) for line in lines):
            blocks.append(block)
            continue
        text = lines[0]
        for line in lines[1:]:
            text += ("" if text and _is_cjk(text[-1]) else " ") + line
        blocks.append(text)
    return "\n\n".join(blocks)


MARKDOWN_MARKS = ("|", "#", "-", "*", "```", ">")


def _is_cjk(char: str) -> bool:
    return "\u3000" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef"


def ocr_source_texts(text: str, markdown: str = "") -> list[str]:
    """The texts to tokenise as draft sources for one image's fast OCR, in lookup order: its
    text as laid out, its plain form, its Markdown with paragraphs joined, its Markdown. The
    model may write any of these forms; the lookup finds whichever it does."""
    texts = [text, plain_ocr_text(text), joined_paragraphs(markdown), markdown]
    return [t for i, t in enumerate(texts) if t and t not in texts[:i]]
