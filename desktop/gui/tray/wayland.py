"""Wayland: no program may grab keys there. The desktop portal's GlobalShortcuts interface
(xdg-desktop-portal 1.18+: KDE Plasma 6, GNOME 48, Hyprland) is the sanctioned way: a
session is created, the shortcut bound (the desktop may ask the user, who may pick other
keys), and `Activated` signals arrive while the session lives. Where the session offers no
such portal, the user is told what to bind in the desktop's own keyboard settings.

The portal's BindShortcuts takes an a(sa{sv}), which QtDBus cannot marshal from Python (it
needs a struct type registered in C++), so this speaks D-Bus with jeepney (pure Python) on a
connection of its own: a thread waits on it and hands each activation to the GUI thread.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop.gui.tray.keys import Shortcut, ShortcutUnavailable

if TYPE_CHECKING:
    from jeepney import Message
    from jeepney.io.blocking import DBusConnection

logger = logging.getLogger(__name__)

PORTAL_SERVICE = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS_INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
REQUEST_INTERFACE = "org.freedesktop.portal.Request"
REGISTRY_INTERFACE = "org.freedesktop.host.portal.Registry"
APP_ID = "desklens"  # the desktop file's name (QGuiApplication.setDesktopFileName)
SHORTCUT_ID = "capture"
CALL_TIMEOUT_S = 5.0  # the portal answers a call at once; only the user's choice takes long
BIND_IT_YOURSELF = (
    "Wayland does not let programs grab keys: bind `desklens capture` to {label} in your "
    "desktop's keyboard settings (GNOME: Settings > Keyboard > View and Customise Shortcuts > "
    "Custom Shortcuts; KDE Plasma: System Settings > Keyboard > Shortcuts > Add New > Command "
    "or Script)."
)
_TRIGGER_NAMES = {"ctrl": "CTRL", "alt": "ALT", "shift": "SHIFT", "super": "LOGO"}


def preferred_trigger(shortcut: Shortcut) -> str:
    """The shortcut in the XDG shortcuts notation the portal takes ("CTRL+ALT+SHIFT+t")."""
    names = [
        _TRIGGER_NAMES[m] for m in ("ctrl", "alt", "shift", "super") if m in shortcut.modifiers
    ]
    return "+".join([*names, shortcut.x11_keysym])


def _portal_call(method: str, signature: str, body: tuple) -> Message:
    from jeepney import DBusAddress, new_method_call

    portal = DBusAddress(PORTAL_PATH, bus_name=PORTAL_SERVICE, interface=SHORTCUTS_INTERFACE)
    return new_method_call(portal, method, signature, body)


class PortalShortcut(QObject):
    _fired = Signal()  # from the D-Bus thread; queued to this object's (the GUI) thread
    _refused = Signal(str)

    def __init__(
        self,
        shortcut: Shortcut,
        on_activated: Callable[[], None],
        on_failed: Callable[[str], None],
    ) -> None:
        super().__init__()
        self.shortcut = shortcut
        self._on_activated = on_activated
        self._on_failed = on_failed
        self._fired.connect(self._activate)
        self._refused.connect(self._refuse)
        self._connection: DBusConnection = None
        self._thread: threading.Thread | None = None
        self.bound = threading.Event()  # the desktop bound the shortcut
        self.heard = 0  # Activated signals heard, any session's (ours are emitted first)

    def start(self) -> None:
        """Opens the session bus and checks the portal at once (the sentence to bind it
        oneself when there is none); the binding goes on in the background."""
        fallback = BIND_IT_YOURSELF.format(label=self.shortcut.label)
        try:
            from jeepney import DBusAddress, Properties
            from jeepney.io.blocking import open_dbus_connection
            from jeepney.wrappers import unwrap_msg

            connection = open_dbus_connection(bus="SESSION")
        except Exception:  # no jeepney, no session bus: nothing to ask
            raise ShortcutUnavailable(fallback) from None
        try:
            portal = DBusAddress(PORTAL_PATH, PORTAL_SERVICE, SHORTCUTS_INTERFACE)
            get = Properties(portal).get("version")
            _signature, version = unwrap_msg(
                connection.send_and_get_reply(get, timeout=CALL_TIMEOUT_S)
            )[0]
        except Exception:  # no portal, or one without GlobalShortcuts
            connection.close()
            raise ShortcutUnavailable(fallback) from None
        logger.info(
            "Binding %s through the GlobalShortcuts portal (v%s)", self.shortcut.label, version
        )
        self._connection = connection
        self._thread = threading.Thread(
            target=self._run, name="desklens-portal-shortcut", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is None:
            return
        # Wakes the thread's blocked read (it ends on the closed socket); the portal ends
        # the session when our connection goes.
        with contextlib.suppress(OSError):
            connection.sock.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=CALL_TIMEOUT_S)
            self._thread = None
        connection.close()

    @Slot()
    def _activate(self) -> None:
        self._on_activated()

    @Slot(str)
    def _refuse(self, sentence: str) -> None:
        self._on_failed(sentence)

    def _run(self) -> None:
        connection = self._connection
        try:
            self._bind_and_listen(connection)
        except Exception as exc:  # the socket closed by stop(), or the portal went away
            if self._connection is connection:
                self._refused.emit(f"The desktop's global shortcut stopped working ({exc}).")

    def _bind_and_listen(self, connection: DBusConnection) -> None:
        from jeepney import DBusAddress, MatchRule, message_bus, new_method_call
        from jeepney.wrappers import unwrap_msg

        # A program outside Flatpak/Snap names itself (xdg-desktop-portal 1.19+), so the
        # desktop lists the shortcut under DeskLens; older portals lack it, which is fine.
        registry = DBusAddress(PORTAL_PATH, PORTAL_SERVICE, REGISTRY_INTERFACE)
        register = new_method_call(registry, "Register", "sa{sv}", (APP_ID, {}))
        with contextlib.suppress(Exception):
            unwrap_msg(connection.send_and_get_reply(register, timeout=CALL_TIMEOUT_S))
        session_token = "desklens_" + secrets.token_hex(6)
        created = self._request(
            connection,
            "CreateSession",
            "a{sv}",
            lambda token: (
                {"handle_token": ("s", token), "session_handle_token": ("s", session_token)},
            ),
        )
        if created is None:
            return
        session = str(created.get("session_handle", ("o", ""))[1])
        activated = MatchRule(
            type="signal", interface=SHORTCUTS_INTERFACE, member="Activated", path=PORTAL_PATH
        )
        connection.send_and_get_reply(message_bus.AddMatch(activated), timeout=CALL_TIMEOUT_S)
        with connection.filter(activated) as signals:
            shortcuts = [
                (
                    SHORTCUT_ID,
                    {
                        "description": ("s", "Capture a screen region"),
                        "preferred_trigger": ("s", preferred_trigger(self.shortcut)),
                    },
                )
            ]
            bound = self._request(
                connection,
                "BindShortcuts",
                "oa(sa{sv})sa{sv}",
                lambda token: (session, shortcuts, "", {"handle_token": ("s", token)}),
                wait=None,  # the desktop may ask the user first
            )
            if bound is None:
                return
            ids = [item[0] for item in bound.get("shortcuts", ("", []))[1]]
            if SHORTCUT_ID not in ids:
                self._refused.emit("The desktop did not bind the global shortcut.")
                return
            self.bound.set()
            while True:
                signal = connection.recv_until_filtered(signals)
                if tuple(signal.body[:2]) == (session, SHORTCUT_ID):
                    self._fired.emit()
                self.heard += 1

    def _request(
        self,
        connection: DBusConnection,
        method: str,
        signature: str,
        body: Callable[[str], tuple],
        wait: float | None = CALL_TIMEOUT_S,
    ) -> dict | None:
        """Calls a portal method that answers through a Request object's Response; its
        results, or None (the refusal reported) when the desktop declined."""
        from jeepney import MatchRule, message_bus
        from jeepney.wrappers import unwrap_msg

        token = "desklens_" + secrets.token_hex(6)
        sender = connection.unique_name.lstrip(":").replace(".", "_")
        # The request's path is known before the call, so no Response can be missed.
        rule = MatchRule(
            type="signal",
            interface=REQUEST_INTERFACE,
            member="Response",
            path=f"{PORTAL_PATH}/request/{sender}/{token}",
        )
        connection.send_and_get_reply(message_bus.AddMatch(rule), timeout=CALL_TIMEOUT_S)
        with connection.filter(rule) as responses:
            call = _portal_call(method, signature, body(token))
            unwrap_msg(connection.send_and_get_reply(call, timeout=CALL_TIMEOUT_S))
            code, results = connection.recv_until_filtered(responses, timeout=wait).body
        if code != 0:
            self._refused.emit(
                "The desktop declined the global shortcut"
                + (" (cancelled)." if code == 1 else " (it failed to bind it).")
            )
            return None
        return dict(results)
