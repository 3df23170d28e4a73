"""Markdown that renders while it streams, with a Copy button on every code block.

Qt's Markdown renderer draws code blocks as text inside the paragraph flow, where no button
can sit, so the answer is split at its ``` fences: prose goes to rich-text labels and each
code block to its own widget. An unclosed fence (the answer is still streaming) is a code
block up to the end.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QRegularExpression, Qt, Signal
from PySide6.QtGui import (
    QFocusEvent,
    QFontDatabase,
    QFontMetrics,
    QResizeEvent,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
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
class TextLink:
    """Words of the rendered text made a link to `href` wherever they stand on their own."""

    text: str
    href: str


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


def markdown_to_html(text: str, links: Sequence[TextLink] = ()) -> str:
    """Qt's own Markdown parser, with tables restyled: its default is a heavy black grid;
    `links`' words made anchors in the rendered text (the Markdown is not touched)."""
    document = QTextDocument()
    document.setMarkdown(text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    add_links(document, links)
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


def add_links(document: QTextDocument, links: Sequence[TextLink]) -> None:
    """Makes each link's words an anchor where they stand apart from other word characters
    (not "4471" in "144712"), longest first, never inside another link."""
    taken: list[tuple[int, int]] = []
    for link in sorted(links, key=lambda link: -len(link.text)):
        pattern = QRegularExpression(rf"(?<!\w){re.escape(link.text)}(?!\w|[.,]\d)")
        cursor = document.find(pattern, 0)
        while not cursor.isNull():
            start, end = cursor.selectionStart(), cursor.selectionEnd()
            if not _in_anchor(document, start, end) and all(
                end <= low or start >= high for low, high in taken
            ):
                anchor = QTextCharFormat()
                anchor.setAnchor(True)
                anchor.setAnchorHref(link.href)
                cursor.mergeCharFormat(anchor)
                taken.append((start, end))
            cursor = document.find(pattern, cursor)


def _in_anchor(document: QTextDocument, start: int, end: int) -> bool:
    probe = QTextCursor(document)
    for position in range(start + 1, end + 1):  # a cursor's format: the character before it
        probe.setPosition(position)
        if probe.charFormat().isAnchor():
            return True
    return False


def _break_after(match: re.Match) -> str:
    return match.group(0) + _ZWSP


class ProseLabel(QLabel):
    """Rich text; Tab into it stops on its first link (Shift+Tab: its last), then on each
    link in turn, and Enter opens the one with the focus (once it has links to reach)."""

    def __init__(self) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.reach_links_by_keyboard(False)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def reach_links_by_keyboard(self, reach: bool) -> None:
        """Tab stops here (it takes the focus) only when it has links of `set_links`."""
        flags = Qt.TextInteractionFlag
        wanted = flags.TextSelectableByMouse | flags.LinksAccessibleByMouse
        if reach:
            wanted |= flags.LinksAccessibleByKeyboard
        if self.textInteractionFlags() != wanted:
            self.setTextInteractionFlags(wanted)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        reason = event.reason()
        if reason in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason):
            # Qt selects no link on the way in: Enter would open nothing until a second Tab.
            self.focusNextPrevChild(reason == Qt.FocusReason.TabFocusReason)


class MarkdownView(QWidget):
    """Re-rendered from the whole text on each update; widgets are reused by position so a
    streaming answer does not flicker."""

    link_activated = Signal(str)  # a link of `set_links` clicked (or Enter on it): its href

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(8)
        self._parts: list[tuple[str, QWidget]] = []
        self._links: tuple[TextLink, ...] = ()
        self._tooltip = ""
        self._text = ""

    def set_links(self, links: Sequence[TextLink], tooltip: str = "") -> None:
        """Makes `links`' words anchors in the prose (code blocks keep their text as it is),
        reachable with Tab; `tooltip` is shown over them."""
        self._links, self._tooltip = tuple(links), tooltip
        for _kind, widget in self._parts:
            widget.setProperty("markdown", None)  # rendered again, with the links
        self.set_markdown(self._text)

    def links(self) -> tuple[TextLink, ...]:
        return self._links

    def set_markdown(self, text: str) -> None:
        self._text = text
        blocks = split_blocks(text)
        for index, block in enumerate(blocks):
            if index < len(self._parts) and self._parts[index][0] != block.kind:
                self._drop_from(index)
            if index >= len(self._parts):
                part = CodeBlock() if block.kind == "code" else self._prose_label()
                self._layout.addWidget(part)
                self._parts.append((block.kind, part))
            widget = self._parts[index][1]
            if isinstance(widget, CodeBlock):
                widget.set_block(block)
            elif isinstance(widget, QLabel) and widget.property("markdown") != block.text:
                widget.setProperty("markdown", block.text)
                widget.setText(markdown_to_html(block.text, self._links))
                linked = any(f'href="{link.href}"' in widget.text() for link in self._links)
                if isinstance(widget, ProseLabel):
                    widget.reach_links_by_keyboard(linked)
        self._drop_from(len(blocks))

    def _prose_label(self) -> ProseLabel:
        label = ProseLabel()
        label.linkActivated.connect(self._on_link)
        # A link's own tooltip (its title) is not shown by a QLabel: the label's, over it.
        label.linkHovered.connect(lambda href: label.setToolTip(self._tooltip_for(href)))
        return label

    def _tooltip_for(self, href: str) -> str:
        return self._tooltip if any(link.href == href for link in self._links) else ""

    def _on_link(self, href: str) -> None:
        if any(link.href == href for link in self._links):
            self.link_activated.emit(href)

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
