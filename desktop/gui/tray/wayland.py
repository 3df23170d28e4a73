"""Wayland: no program may grab keys there. The desktop portal's GlobalShortcuts interface
(xdg-desktop-portal 1.19+, KDE Plasma 6, GNOME 48) is the sanctioned way; where the session
does not offer it, the user is told what to bind in the desktop's own keyboard settings."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtDBus import QDBusConnection, QDBusMessage

from desktop.gui.tray.keys import Shortcut, ShortcutUnavailable

PORTAL_SERVICE = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS_INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
BIND_IT_YOURSELF = (
    "Wayland does not let programs grab keys: bind `desklens capture` to {label} in your "
    "desktop's keyboard settings (GNOME: Settings > Keyboard > View and Customise Shortcuts > "
    "Custom Shortcuts; KDE Plasma: System Settings > Keyboard > Shortcuts > Add New > Command "
    "or Script)."
)
PORTAL_NOT_USED = BIND_IT_YOURSELF.replace(
    "Wayland does not let programs grab keys",
    "Your desktop offers global shortcuts through its portal, which DeskLens does not use yet",
)


def portal_version(bus: QDBusConnection | None = None) -> int:
    """The GlobalShortcuts portal's interface version, 0 when the session has none."""
    bus = bus or QDBusConnection.sessionBus()
    if not bus.isConnected():
        return 0
    call = QDBusMessage.createMethodCall(
        PORTAL_SERVICE, PORTAL_PATH, "org.freedesktop.DBus.Properties", "Get"
    )
    call.setArguments([SHORTCUTS_INTERFACE, "version"])
    reply = bus.call(call)
    if reply.type() != QDBusMessage.MessageType.ReplyMessage or not reply.arguments():
        return 0
    value = reply.arguments()[0]
    return int(value) if isinstance(value, int) else 0


class PortalShortcut:
    def __init__(
        self,
        shortcut: Shortcut,
        on_activated: Callable[[], None],
        on_failed: Callable[[str], None],
    ) -> None:
        self.shortcut = shortcut
        self._on_activated = on_activated
        self._on_failed = on_failed

    def start(self) -> None:
        if portal_version() == 0:
            raise ShortcutUnavailable(BIND_IT_YOURSELF.format(label=self.shortcut.label))
        # BindShortcuts takes an a(sa{sv}), which QtDBus cannot marshal from Python (it
        # needs a C++-registered struct type): until DeskLens speaks D-Bus another way, the
        # desktop's own binding is the way there too.
        raise ShortcutUnavailable(PORTAL_NOT_USED.format(label=self.shortcut.label))

    def stop(self) -> None:
        """Nothing was taken."""
