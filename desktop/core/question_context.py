"""What goes before a question: the optional system prompt of a new chat and the fast-OCR
text of the question's images ("Use the extracted text", `desklens ask --ground`). Both come
before the question, so that reading ahead can feed them before the question is typed.

The history stores the composed prompt beside the typed words (so a reopened chat replays
exactly what the engine's KV state holds), and what was put before them as columns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.core.draft_texts import draft_hints

if TYPE_CHECKING:
    from desktop.core.ocr import OcrResult

logger = logging.getLogger(__name__)

QUESTION_LABEL = "Question: "
SEPARATOR = "\n\n"


def grounded_question(question: str, ocr_texts: Sequence[str]) -> str:
    """The question preceded by the fast-OCR lines of each image (see ocr.grounding_text)."""
    blocks = [
        f"Image {number}:\n{text}" if len(ocr_texts) > 1 else text
        for number, text in enumerate(ocr_texts, start=1)
    ]
    return "\n\n".join([*blocks, f"Question: {question}"])


def compose_question(question: str, *, system: str = "", ocr_texts: Sequence[str] = ()) -> str:
    """`question` as the model reads it: system prompt, then each image's OCR lines."""
    prompt = grounded_question(question, list(ocr_texts)) if ocr_texts else question
    if not system:
        return prompt
    if not ocr_texts:
        prompt = QUESTION_LABEL + question
    return system + SEPARATOR + prompt


def grounded_prompt(
    question: str, read: Callable[[], Sequence[OcrResult]], system: str = ""
) -> GroundedPrompt:
    """The prompt with the fast OCR's result of each of the question's images (`read`: the
    service's, which reads each picture once) before the question; the OCR's text also drafts
    the answer, which often copies it. An OCR that fails leaves the question without its
    grounding rather than failing the answer."""
    from desktop.core.ocr import grounding_text

    texts: list[str] = []
    drafts: list[str] = []
    try:
        results = read()
    except Exception:  # OpenVINO raises plain RuntimeErrors; the answer still runs
        logger.exception("the fast OCR for a grounded question failed")
    else:
        texts = [grounding_text(result) for result in results]
        drafts = draft_hints(results)
    return GroundedPrompt(compose_question(question, system=system, ocr_texts=texts), tuple(drafts))


@dataclass(frozen=True)
class GroundedPrompt:
    prompt: str
    drafts: tuple[str, ...] = ()  # the OCR's text in the forms the answer may copy
