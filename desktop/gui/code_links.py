"""Links in an extraction's codes block ("QR: https://...") made clickable in its bubble."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

# A line of the codes block that desktop/core/ocr/codes.py writes, when its text is a link.
_CODE_LINK = re.compile(r"^(QR|EAN-13|EAN-8|UPC-A|UPC-E|Code 128): ((?:https?://|mailto:)\S+)$")


def code_links_html(text: str) -> str | None:
    """`text` as rich text with its code links as anchors; None when it has none."""
    lines, linked = [], False
    for line in text.split("\n"):
        match = _CODE_LINK.match(line)
        if match is None:
            lines.append(html.escape(line))
            continue
        linked = True
        kind, url = match.groups()
        lines.append(f'{html.escape(kind)}: <a href="{html.escape(url)}">{html.escape(url)}</a>')
    if not linked:
        return None
    return '<div style="white-space: pre-wrap">' + "<br>".join(lines) + "</div>"


def link_codes(label: QLabel) -> None:
    """Turns the label's code links into anchors that open in the browser (the one place the
    app hands something to the network: the user's click, in the user's browser)."""
    rich = code_links_html(label.text())
    if rich is None:
        return
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setText(rich)
    label.setOpenExternalLinks(True)
    flags = Qt.TextInteractionFlag
    label.setTextInteractionFlags(flags.TextSelectableByMouse | flags.LinksAccessibleByMouse)
