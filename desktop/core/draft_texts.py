"""The fast OCR's text in the forms a model may copy it in: drafting sources for greedy
answers (refinement, extraction cards shown in the chat, grounded questions). Plain text
functions, no imports of the app: the conversation service and the refinement both use them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.ocr.models import OcrResult


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
