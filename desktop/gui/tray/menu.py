"""The tray icon and its menu: Capture region → text, Capture region → ask, Open app, Quit.

The menu only names what to do; a `TrayTarget` does it: the open window's own capture when
the app shows the icon (in_app.py), or the `desklens tray` process's (process.py), which
hands the capture to an open window when there is one. Without a system tray (a bare X
server, some GNOME sessions without the AppIndicator extension) the global shortcut still
works: `show()` says whether the icon could be shown.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop import APP_NAME
from desktop.gui.widgets.icons import app_icon

CAPTURE_TEXT = "Capture region → text"
CAPTURE_ASK = "Capture region → ask"
OPEN_APP = "Open app"
QUIT = "Quit"
NO_TRAY = (
    "This desktop has no system tray, so DeskLens shows no tray icon; the global shortcut "
    "works without it."
)


class TrayTarget(Protocol):
    def capture(self, mode: str) -> None:
        """Freezes the screens for a region: "copy" its text, "ask" about it, or "" for the
        setting (Settings > Capture)."""

    def open_app(self) -> None:
        """Brings the app's window forward, starting the app when it is not open."""

    def quit(self) -> None:
        """Ends what shows the icon (the tray process, or the app)."""


class TrayMenu(QObject):
    def __init__(self, target: TrayTarget, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.menu = QMenu()
        self.menu.setAccessibleName(f"{APP_NAME} tray menu")
        self.actions: dict[str, QAction] = {}
        for name, run in (
            (CAPTURE_TEXT, lambda: target.capture("copy")),
            (CAPTURE_ASK, lambda: target.capture("ask")),
            (OPEN_APP, target.open_app),
            (QUIT, target.quit),
        ):
            action = self.menu.addAction(name)
            action.triggered.connect(run)
            self.actions[name] = action
            if name == CAPTURE_ASK:
                self.menu.addSeparator()
        self.icon = QSystemTrayIcon(app_icon(), self)
        self.icon.setToolTip(APP_NAME)
        self.icon.setContextMenu(self.menu)
        # A left click opens the app, as on most tray icons; the menu is a right click.
        self.icon.activated.connect(
            lambda reason: (
                target.open_app() if reason == QSystemTrayIcon.ActivationReason.Trigger else None
            )
        )

    def set_shortcut_hint(self, label: str) -> None:
        """The global shortcut, in the icon's tooltip ("" when none)."""
        self.icon.setToolTip(f"{APP_NAME} ({label})" if label else APP_NAME)

    def show(self) -> bool:
        """Shows the icon; False when the desktop has no system tray to show it in."""
        if not QSystemTrayIcon.isSystemTrayAvailable():
            return False
        self.icon.show()
        return True

    def hide(self) -> None:
        self.icon.hide()
