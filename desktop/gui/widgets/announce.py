"""What a screen reader says when something finishes that the user did not move to: a finished
answer, a finished extraction (issue 55). Qt sends it as an announcement (AT-SPI's
`Announcement`, UI Automation's notification) from the widget that shows it."""

from __future__ import annotations

from PySide6.QtGui import QAccessible, QAccessibleAnnouncementEvent
from PySide6.QtWidgets import QWidget

MAX_SPOKEN = 300  # characters of an answer read out; the rest is in its card


def announce(widget: QWidget, text: str) -> None:
    """Says `text` politely (after what the reader is saying), about `widget`."""
    if len(text) > MAX_SPOKEN:
        text = text[:MAX_SPOKEN].rsplit(" ", 1)[0] + "…"
    event = QAccessibleAnnouncementEvent(widget, text)
    event.setPoliteness(QAccessible.AnnouncementPoliteness.Polite)
    QAccessible.updateAccessibility(event)
