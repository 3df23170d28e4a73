"""The global shortcut: one seam (`GlobalShortcut`), one implementation per platform, and
`GlobalHotkey`, which picks the platform's and says in one sentence why when there is none.

X11 grabs the key on the root window (x11.py); Windows registers a hot key (win32.py);
Wayland lets no program grab keys, so there the desktop portal's GlobalShortcuts interface
binds it when the desktop offers one (wayland.py), and otherwise the user is told what to
bind in the desktop's own settings.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication

from desktop.gui.tray.keys import Shortcut, ShortcutError, ShortcutUnavailable, parse_shortcut

logger = logging.getLogger(__name__)


class GlobalShortcut(Protocol):
    """A key combination taken system-wide; its owner's callback runs on the GUI thread."""

    shortcut: Shortcut

    def start(self) -> None:
        """Takes the keys, or raises ShortcutUnavailable saying why."""

    def stop(self) -> None:
        """Gives the keys back; safe to call twice."""


def backend_for(
    shortcut: Shortcut, on_activated: Callable[[], None], on_failed: Callable[[str], None]
) -> GlobalShortcut:
    """The platform's implementation; raises ShortcutUnavailable where there is none."""
    platform = QGuiApplication.platformName()
    if platform == "xcb":
        from desktop.gui.tray.x11 import X11Grab

        return X11Grab(shortcut, on_activated)
    if platform == "windows" or sys.platform == "win32":
        from desktop.gui.tray.win32 import WindowsHotkey

        return WindowsHotkey(shortcut, on_activated)
    if platform.startswith("wayland"):
        from desktop.gui.tray.wayland import PortalShortcut

        return PortalShortcut(shortcut, on_activated, on_failed)
    if platform == "cocoa":
        raise ShortcutUnavailable(
            "DeskLens cannot take a global shortcut on macOS yet: bind `desklens capture` to "
            "one with Shortcuts or Automator (Quick Action > Run Shell Script)."
        )
    raise ShortcutUnavailable(
        f"There is no global shortcut on Qt's {platform!r} platform (no desktop to take keys "
        "from): run DeskLens on the desktop's own display."
    )


class GlobalHotkey(QObject):
    """`activated` each time the keys are pressed anywhere on the desktop; `failed` with a
    sentence when the platform refuses them later (the portal answers asynchronously)."""

    activated = Signal()
    failed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.backend: GlobalShortcut | None = None
        self.problem = ""  # why the last start() took no keys, for the settings and the CLI

    @property
    def label(self) -> str:
        return self.backend.shortcut.label if self.backend is not None else ""

    def start(self, text: str) -> str:
        """Takes the keys `text` names (after giving back any taken before): "" when they
        work, else the sentence why not (a bad shortcut, a taken key, no desktop)."""
        self.stop()
        try:
            backend = backend_for(parse_shortcut(text), self.activated.emit, self._on_failed)
            backend.start()
        except (ShortcutError, ShortcutUnavailable) as exc:
            self.problem = str(exc)
            return self.problem
        self.backend, self.problem = backend, ""
        logger.info("Global shortcut %s taken", backend.shortcut.label)
        return ""

    def stop(self) -> None:
        backend, self.backend = self.backend, None
        if backend is not None:
            backend.stop()

    def _on_failed(self, sentence: str) -> None:
        self.stop()
        self.problem = sentence
        self.failed.emit(sentence)
