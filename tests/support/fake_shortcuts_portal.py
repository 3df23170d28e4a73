"""A stand-in for xdg-desktop-portal's GlobalShortcuts interface on a private session bus (a
thread of the test process, speaking D-Bus with jeepney): it answers CreateSession and
BindShortcuts through Request objects' Response signals, as the real portal does once the
user agreed (`answer=1`: as when the user cancels), and sends Activated when told to."""

from __future__ import annotations

import socket
import threading

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

PORTAL_SERVICE = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
REQUEST = "org.freedesktop.portal.Request"


class FakeShortcutsPortal:
    def __init__(self, address: str, *, answer: int = 0) -> None:
        self.answer = answer
        self.sessions: list[str] = []
        self.registered: list[str] = []  # app ids given to host.portal.Registry
        self.bound: list[tuple[str, dict]] = []  # (id, options) as BindShortcuts got them
        self.connection = open_dbus_connection(bus=address)
        self.connection.send_and_get_reply(message_bus.RequestName(PORTAL_SERVICE), timeout=10)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def activate(self, session: str, shortcut_id: str) -> None:
        portal = DBusAddress(PORTAL_PATH, interface=SHORTCUTS)
        self.connection.send(
            new_signal(portal, "Activated", "osta{sv}", (session, shortcut_id, 0, {}))
        )

    def close(self) -> None:
        self.connection.sock.shutdown(socket.SHUT_RDWR)
        self._thread.join(timeout=10)
        self.connection.close()

    def _serve(self) -> None:
        try:
            while True:
                self._answer(self.connection.receive())
        except (OSError, ValueError, EOFError):
            return  # closed

    def _answer(self, message) -> None:
        if message.header.message_type != MessageType.method_call:
            return
        fields = message.header.fields
        member = fields[HeaderFields.member]
        if member == "Get":  # Properties.Get(GlobalShortcuts, "version")
            self.connection.send(new_method_return(message, "v", (("u", 1),)))
            return
        if member == "Register":  # host.portal.Registry: the app's id
            self.registered.append(message.body[0])
            self.connection.send(new_method_return(message))
            return
        options = message.body[0] if member == "CreateSession" else message.body[3]
        token = options["handle_token"][1]
        caller = fields[HeaderFields.sender].lstrip(":").replace(".", "_")
        request = f"{PORTAL_PATH}/request/{caller}/{token}"
        self.connection.send(new_method_return(message, "o", (request,)))
        if member == "CreateSession":
            session = f"{PORTAL_PATH}/session/{caller}/{options['session_handle_token'][1]}"
            self.sessions.append(session)
            results = {"session_handle": ("o", session)}
        else:  # BindShortcuts(session, shortcuts, parent_window, options)
            self.bound.extend(message.body[1])
            results = {"shortcuts": ("a(sa{sv})", list(message.body[1]))}
        response = new_signal(DBusAddress(request, interface=REQUEST), "Response", "ua{sv}",
                              (self.answer, results if self.answer == 0 else {}))  # fmt: skip
        self.connection.send(response)
