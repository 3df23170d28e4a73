"""A conversation as a document: Markdown with an images folder, or one self-contained HTML
file (images embedded as data: URLs) that opens in any browser. Qt-free: the app (on its
storage thread) and `desklens history export` use the same functions.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.core import atomic
from desktop.core.history.records import Finish, Role, StoredImage, StoredMessage
from desktop.core.reading_summary import answer_summary, stats_of

FORMATS = ("md", "html")
HEADINGS = {
    Role.USER: "You", Role.ASSISTANT: "DeskLens", Role.OCR: "Extracted text",
    Role.ERROR: "Not answered (failed)", Role.NOTE: "Note",
}  # fmt: skip
# How an answer that did not end by itself is marked (its heading says it).
ENDINGS = {Finish.STOPPED: "stopped by you", Finish.LENGTH: "cut short at the answer length"}
_UNSAFE_NAME = re.compile(r'[<>:"/\\|?*\x00-\x1f]')
# Fenced code blocks (``` or ~~~ to the same fence, or the end) and inline code spans.
_CODE = re.compile(
    r"(^(?:```+|~~~+)[^\n]*\n.*?(?:^(?:```+|~~~+)[ \t]*$|\Z)|(`+)[^`]+?\2)", re.M | re.S
)
_SCRIPT_LINK = re.compile(r"\]\(\s*(javascript|vbscript|data):", re.I)


@dataclass(frozen=True)
class ExportedChat:
    path: Path  # the document
    messages: int
    images: int  # image files written (Markdown) or embedded (HTML)


def safe_file_name(text: str, fallback: str = "chat") -> str:
    """`text` usable as a file name on every system (no separators, no control characters)."""
    # A title's trailing "?" would end the name in "_": unsafe characters at the ends go.
    name = _UNSAFE_NAME.sub("_", " ".join(text.split())).strip(" ._")
    return name[:80] or fallback


def conversation_markdown(
    title: str, messages: Sequence[StoredMessage], link: Callable[[StoredImage], str]
) -> str:
    """The chat as Markdown; `link(image)` is where each image's picture is (a relative
    path, or just its name for the clipboard)."""
    parts = [f"# {markdown_safe(title)}"]
    for message, pictures in zip(messages, _pictures(messages), strict=True):
        if message.role is Role.NOTE:
            parts.append(f"*{markdown_safe(message.text)}*")
            continue
        block = [f"## {markdown_safe(_heading(message))}"]
        if message.asked.label:
            block.append(f"*{message.asked.label}*")
        block += [f"![{_alt(image)}]({link(image)})" for image in pictures]
        block.append(
            _fenced(message.text) if message.role is Role.OCR else markdown_safe(message.text)
        )
        block.append(f"*{markdown_safe(figures)}*" if (figures := _figures(message)) else "")
        parts.append("\n\n".join(b for b in block if b))
    return "\n\n".join(parts) + "\n"


def conversation_html(title: str, messages: Sequence[StoredMessage]) -> str:
    """One HTML file: every text escaped, every image embedded."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    for message, pictures in zip(messages, _pictures(messages), strict=True):
        body.append(f'<section class="{html.escape(message.role.value)}">')
        if message.role is not Role.NOTE:
            body.append(f"<h2>{html.escape(_heading(message))}</h2>")
        if message.asked.label:
            body.append(f'<p class="context">{html.escape(message.asked.label)}</p>')
        for image in pictures:
            data = base64.b64encode(image.path.read_bytes()).decode("ascii")
            body.append(
                f'<img src="data:image/png;base64,{data}" alt="{html.escape(_alt(image))}"'
                f' width="{image.width}" height="{image.height}">'
            )
        body.append(f'<div class="text">{html.escape(message.text)}</div>')
        if figures := _figures(message):
            body.append(f'<p class="figures">{html.escape(figures)}</p>')
        body.append("</section>")
    return _PAGE.format(title=html.escape(title), body="\n".join(body))


def write_markdown(title: str, messages: Sequence[StoredMessage], target: Path) -> ExportedChat:
    """`target` (.md) plus `<stem> images/` beside it with every picture, linked relatively."""
    folder = target.with_name(f"{target.stem} images")
    names: dict[str, str] = {}  # digest -> file name: a picture shown twice is written once
    for image in (image for pictures in _pictures(messages) for image in pictures):
        if image.digest not in names:
            names[image.digest] = (
                f"{len(names) + 1:02d} {safe_file_name(Path(image.name).stem)}.png"
            )
            atomic.write_bytes(folder / names[image.digest], image.path.read_bytes(), mkdir=True)

    def link(image: StoredImage) -> str:
        return f"<{folder.name}/{names[image.digest]}>"  # <…>: spaces are allowed inside

    atomic.write_text(target, conversation_markdown(title, messages, link))
    return ExportedChat(target, len(messages), len(names))


def write_html(title: str, messages: Sequence[StoredMessage], target: Path) -> ExportedChat:
    atomic.write_text(target, conversation_html(title, messages))
    return ExportedChat(target, len(messages), sum(len(p) for p in _pictures(messages)))


def write_document(
    title: str, messages: Sequence[StoredMessage], target: Path, fmt: str
) -> ExportedChat:
    if fmt not in FORMATS:
        raise ValueError(f"Unknown export format '{fmt}'; choose one of: {', '.join(FORMATS)}.")
    writer = write_markdown if fmt == "md" else write_html
    return writer(title, messages, target)


def clipboard_markdown(title: str, messages: Sequence[StoredMessage]) -> str:
    """ "Copy conversation": the Markdown with each image named (a clipboard has no folder)."""
    return conversation_markdown(title, messages, lambda image: safe_file_name(image.name))


def _heading(message: StoredMessage) -> str:
    heading = HEADINGS[message.role]
    if message.role is Role.OCR and message.images:  # its picture: the question's, or its own
        return f"{heading} ({message.images[0].name})"
    ending = ENDINGS.get(message.finish) if message.finish is not None else None
    if message.role is Role.ASSISTANT and ending is None and message.stopped:
        ending = ENDINGS[Finish.STOPPED]  # stored before schema 3 kept `finish`
    return f"{heading} ({ending})" if ending else heading


def _figures(message: StoredMessage) -> str:
    """An answer's figures as its card shows them (how much of the image it read, timings)."""
    stats = stats_of(message.stats) if message.role is Role.ASSISTANT else None
    return answer_summary(stats) if stats is not None else ""


def _pictures(messages: Sequence[StoredMessage]) -> list[list[StoredImage]]:
    """The pictures each message shows: an extraction's picture only when no earlier message
    showed it (an image whose text was extracted without a question is still exported)."""
    shown: set[str] = set()
    result = []
    for message in messages:
        pictures = list(message.images)
        if message.role is Role.OCR:
            pictures = [image for image in pictures if image.digest not in shown]
        shown.update(image.digest for image in message.images)
        result.append(pictures)
    return result


def _alt(image: StoredImage) -> str:
    return html.escape(image.name.replace("[", "(").replace("]", ")"), quote=False)


def markdown_safe(text: str) -> str:
    """Text as Markdown that a viewer shows but never runs or fetches: raw HTML (<script>,
    <iframe src=...>) escaped, images (which a viewer would fetch from their URL) and
    javascript:/data: links shown as text. Code (fenced blocks, `spans`) is kept as is:
    viewers show it literally."""
    out, done = [], 0
    for code in _CODE.finditer(text):
        out += [_neutral(text[done : code.start()]), code.group()]
        done = code.end()
    return "".join([*out, _neutral(text[done:])])


def _neutral(text: str) -> str:
    text = html.escape(text, quote=False)  # & < > : no tag, entity or autolink survives
    text = text.replace("![", "!\\[")  # an image a viewer would load from the web
    return _SCRIPT_LINK.sub(r"]\\(\1:", text)


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}"


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font: 15px/1.5 system-ui, sans-serif; max-width: 860px; margin: 2em auto;
       padding: 0 1em; color: #1d1d1f; }}
section {{ margin: 1.2em 0; padding: 0.8em 1em; border-radius: 10px; background: #f4f4f6; }}
section.user {{ background: #e6efff; }}
section.error {{ background: #fdecec; }}
section.note {{ background: none; color: #777; font-style: italic; }}
.context {{ margin: 0 0 0.4em; color: #555; font-style: italic; font-size: 0.85em; }}
h2 {{ font-size: 0.85em; margin: 0 0 0.4em; color: #555; }}
img {{ max-width: 100%; height: auto; display: block; margin: 0.4em 0; border-radius: 6px; }}
.text {{ white-space: pre-wrap; }}
.figures {{ font-size: 0.8em; color: #555; margin: 0.5em 0 0; }}
section.ocr .text {{ font-family: ui-monospace, monospace; font-size: 0.9em; }}
</style>
</head>
<body>
{body}
</body>
</html>
"""
