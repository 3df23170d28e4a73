"""Links in an extraction's codes block ("QR: https://...", a contact's "  Website: https://...")
made clickable in its bubble; a payload's fields show as the block writes them."""

from __future__ import annotations

import functools
import html
import re
import weakref

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QBoxLayout, QLabel

from desktop.gui.widgets.basics import text_label

NO_BROWSER = (
    "No web browser could be opened for {url}. The link is copied: paste it into a browser."
)
# The note shown under a label when no browser opens, once per label (it goes with it).
_NOTES: weakref.WeakKeyDictionary[QLabel, QLabel] = weakref.WeakKeyDictionary()
_open_url = QDesktopServices.openUrl  # replaced in tests: no browser is started there

_URL = r"(?:https?://|mailto:)\S+"
_FIELD_LINE = re.compile(r"^  ([^:]+): (.*)$")  # a payload's field under its code's line


@functools.cache
def _code_line() -> re.Pattern[str]:
    """A line of the codes block that desktop/core/ocr/codes.py writes. Imported on first
    use: importing the GUI must not load the OCR package (tests/gui/test_gui_parts.py)."""
    from desktop.core.ocr.codes import KINDS

    return re.compile(rf"^({'|'.join(re.escape(kind) for kind in KINDS)}): (.*)$")


def code_links_html(text: str) -> str | None:
    """`text` as rich text with its code links as anchors; None when it has none."""
    lines, linked, in_code = [], False, False
    code_line = _code_line()
    for line in text.split("\n"):
        match = code_line.match(line) or (_FIELD_LINE.match(line) if in_code else None)
        # A code's fields follow its line, maybe after more lines of its raw text (a vCard);
        # the codes block has no blank line, the OCR text before it ends with one.
        in_code = (in_code and line != "") or match is not None
        if match is None or not re.fullmatch(_URL, match.group(2)):
            lines.append(html.escape(line))
            continue
        linked = True
        prefix, url = line[: match.start(2)], match.group(2)
        lines.append(f'{html.escape(prefix)}<a href="{html.escape(url)}">{html.escape(url)}</a>')
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


def no_browser_note(label: QLabel) -> QLabel | None:
    """The note under `label` that says no browser opened its link, once one did not."""
    return _NOTES.get(label)


def open_link(label: QLabel, url: str) -> bool:
    """Opens `url` in the browser; when none opens, copies it and says so under `label`
    (Qt's own opening fails silently)."""
    if _open_url(QUrl(url)):
        return True
    QGuiApplication.clipboard().setText(url)
    note = _NOTES.get(label)
    if note is None:
        note = text_label("", "errorText")
        _NOTES[label] = note
        parent = label.parentWidget()
        layout = parent.layout() if parent is not None else None
        if isinstance(layout, QBoxLayout):
            layout.insertWidget(layout.indexOf(label) + 1, note)
    note.setText(NO_BROWSER.format(url=url))
    note.show()
    return False
