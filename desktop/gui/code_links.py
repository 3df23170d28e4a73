"""Links in an extraction's codes block ("QR: https://...") made clickable in its bubble."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QBoxLayout, QLabel

from desktop.gui.widgets import text_label

# A line of the codes block that desktop/core/ocr/codes.py writes, when its text is a link.
NO_BROWSER = (
    "No web browser could be opened for {url}. The link is copied: paste it into a browser."
)
_open_url = QDesktopServices.openUrl  # replaced in tests: no browser is started there

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
    label.setOpenExternalLinks(False)  # opened here, so a failure can be said
    label.linkActivated.connect(lambda url: open_link(label, url))
    flags = Qt.TextInteractionFlag
    label.setTextInteractionFlags(flags.TextSelectableByMouse | flags.LinksAccessibleByMouse)


def open_link(label: QLabel, url: str) -> bool:
    """Opens `url` in the browser; when none opens, copies it and says so under `label`
    (Qt's own opening fails silently)."""
    if _open_url(QUrl(url)):
        return True
    QGuiApplication.clipboard().setText(url)
    note = getattr(label, "no_browser_note", None)
    if note is None:
        note = text_label("", "errorText")
        label.no_browser_note = note
        parent = label.parentWidget()
        layout = parent.layout() if parent is not None else None
        if isinstance(layout, QBoxLayout):
            layout.insertWidget(layout.indexOf(label) + 1, note)
    note.setText(NO_BROWSER.format(url=url))
    note.show()
    return False
