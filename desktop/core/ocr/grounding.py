"""Fast-OCR text formatted as grounding for the vision-language model.

The VLM reads small print less reliably than the OCR, and the OCR cannot answer questions:
handing the model the OCR lines alongside the question lets it quote exact text. Boxes use
Qwen-VL's convention (0..1000 relative to the image), which the model already understands.
"""

from __future__ import annotations

from desktop.core.ocr.models import OcrLine, OcrResult

# Enough for a dense screenshot (~80 lines) without crowding out the conversation.
DEFAULT_MAX_CHARS = 6000
HEADER = (
    "Text read from the image by OCR, in reading order; each line starts with its box "
    "(x1,y1,x2,y2) on a 0-1000 scale. It may contain recognition mistakes."
)
NO_TEXT = "OCR found no text in the image."
OCR_MARK = HEADER.split(";")[0]  # how every grounding block starts, with or without boxes


def grounding_text(
    result: OcrResult, *, with_boxes: bool = True, max_chars: int = DEFAULT_MAX_CHARS
) -> str:
    """The OCR lines as a block of text to put before the user's question."""
    if not result.lines:
        return NO_TEXT
    header = (
        HEADER if with_boxes else HEADER.split(";")[0] + ". It may contain recognition mistakes."
    )
    out = [header]
    used = len(header)
    for number, line in enumerate(result.lines):
        entry = _entry(line, result.width, result.height) if with_boxes else _row(line)
        if used + len(entry) + 1 > max_chars:
            out.append(f"[{len(result.lines) - number} more lines omitted]")
            break
        out.append(entry)
        used += len(entry) + 1
    return "\n".join(out)


def _row(line: OcrLine) -> str:
    text = " | ".join(line.text.split("\t")) if line.kind == "table" else line.text
    return " " * line.indent + text


def _entry(line: OcrLine, width: int, height: int) -> str:
    left, top, right, bottom = line.box
    scaled = (
        _per_mille(left, width),
        _per_mille(top, height),
        _per_mille(right, width),
        _per_mille(bottom, height),
    )
    return "({},{},{},{}) {}".format(*scaled, _row(line))


def _per_mille(value: int, size: int) -> int:
    return min(1000, max(0, round(1000 * value / max(size, 1))))
