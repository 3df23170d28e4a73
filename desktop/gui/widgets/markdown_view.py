"""Markdown that renders while it streams, with a Copy button on every code block.

Qt's Markdown renderer draws code blocks as text inside the paragraph flow, where no button
can sit, so the answer is split at its ``` fences: prose goes to rich-text labels and each
code block to its own widget. An unclosed fence (the answer is still streaming) is a code
block up to the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QFontMetrics, QResizeEvent, QTextDocument
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.theme import current_theme
from desktop.gui.widgets.basics import copy_button

_TABLE = re.compile(r"<table[^>]*>")
_BODY = re.compile(r"<body[^>]*>")
# Text between tags (not attributes); a run of 30+ non-space characters in it.
_TEXT_NODE = re.compile(r">([^<]+)<")
_LONG_RUN = re.compile(r"[^\s&;]{30}(?=[^\s&;])")
_ZWSP = "\u200b"
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Block:
    kind: Literal["markdown", "code"]
    text: str
    language: str = ""


def split_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    prose: list[str] = []
    code: list[str] | None = None
    fence = language = ""
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if code is None and match:
            if prose:
                blocks.append(Block("markdown", "\n".join(prose)))
                prose = []
            fence, language, code = match.group(1), match.group(2), []
        elif code is not None and line.strip().startswith(fence) and not line.strip(fence[0]):
            blocks.append(Block("code", "\n".join(code), language))
            code = None
        elif code is not None:
            code.append(line)
        else:
            prose.append(line)
    if code is not None:
        blocks.append(Block("code", "\n".join(code), language))
    if prose and "\n".join(prose).strip():
        blocks.append(Block("markdown", "\n".join(prose)))
    return [b for b in blocks if b.kind == "code" or b.text.strip()]


class CodeBlock(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("codeBlock")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 4, 6, 8)
        layout.setSpacing(2)
        header = QHBoxLayout()
        self.language = QLabel()
        self.language.setObjectName("muted")
        header.addWidget(self.language)
        header.addStretch(1)
        header.addWidget(copy_button(self.text, "code"))
        layout.addLayout(header)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("codeText")
        self.editor.setReadOnly(True)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setFrameShape(QFrame.Shape.NoFrame)
        self.editor.setAccessibleName("Code")
        self.editor.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        layout.addWidget(self.editor)

    def set_block(self, block: Block) -> None:
        self.language.setText(block.language or "code")
        if self.editor.toPlainText() != block.text:
            self.editor.setPlainText(block.text)
        self._fit_height()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def _fit_height(self) -> None:
        """All lines visible; room for the horizontal scroll bar only when a line is wider."""
        text = self.editor.toPlainText()
        metrics = QFontMetrics(self.editor.font())
        margins = int(self.editor.document().documentMargin() * 2) + 2
        widest = max((metrics.horizontalAdvance(line) for line in text.split("\n")), default=0)
        scrollbar = self.editor.horizontalScrollBar().sizeHint().height()
        overflow = widest + margins > self.editor.viewport().width()
        lines = text.count("\n") + 1
        height = lines * metrics.lineSpacing() + margins + (scrollbar if overflow else 0)
        if self.editor.height() != height:
            self.editor.setFixedHeight(height)

    def text(self) -> str:
        return self.editor.toPlainText()


def markdown_to_html(text: str) -> str:
    """Qt's own Markdown parser, with tables restyled: its default is a heavy black grid."""
    document = QTextDocument()
    document.setMarkdown(text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    html = document.toHtml()
    grid = current_theme().grid
    html = _BODY.sub(
        "<body>", html
    )  # the label's font (theme, font size) applies, not Qt's default
    # QLabel wraps only at spaces: a long URL or token run would overflow the bubble, so
    # visible text gets zero-width break points (hrefs and the copied text are untouched).
    html = _TEXT_NODE.sub(lambda m: ">" + _LONG_RUN.sub(_break_after, m.group(1)) + "<", html)
    return _TABLE.sub(
        f'<table border="1" style="border-collapse:collapse; border-style:solid; '
        f'border-color:{grid};" '
        'cellpadding="6" cellspacing="0">',
        html,
    )


def _break_after(match: re.Match) -> str:
    return match.group(0) + _ZWSP


def _prose_label() -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.LinksAccessibleByMouse
    )
    label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    return label


class MarkdownView(QWidget):
    """Re-rendered from the whole text on each update; widgets are reused by position so a
    streaming answer does not flicker."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(8)
        self._parts: list[tuple[str, QWidget]] = []

    def set_markdown(self, text: str) -> None:
        blocks = split_blocks(text)
        for index, block in enumerate(blocks):
            if index < len(self._parts) and self._parts[index][0] != block.kind:
                self._drop_from(index)
            if index >= len(self._parts):
                part = CodeBlock() if block.kind == "code" else _prose_label()
                self._layout.addWidget(part)
                self._parts.append((block.kind, part))
            widget = self._parts[index][1]
            if isinstance(widget, CodeBlock):
                widget.set_block(block)
            elif isinstance(widget, QLabel) and widget.property("markdown") != block.text:
                widget.setProperty("markdown", block.text)
                widget.setText(markdown_to_html(block.text))
        self._drop_from(len(blocks))

    def code_blocks(self) -> list[CodeBlock]:
        return [w for kind, w in self._parts if isinstance(w, CodeBlock)]

    def plain_text(self) -> str:
        """What the user sees, for tests and accessibility."""
        return "\n".join(
            widget.text() if isinstance(widget, CodeBlock) else widget.property("markdown")
            for _, widget in self._parts
        )

    def _drop_from(self, index: int) -> None:
        while len(self._parts) > index:
            _, widget = self._parts.pop()
            self._layout.removeWidget(widget)
            widget.deleteLater()
