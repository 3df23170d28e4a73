"""Wayland: the screen through the XDG desktop portal's Screenshot interface (over QtDBus).

Wayland compositors let no application read the screen; the portal (xdg-desktop-portal with
the desktop's backend: GNOME, KDE, wlroots) takes the picture for us, after asking the user
the first time. The call returns a request object at once; the picture's file arrives later
in that object's Response signal. Without a session bus or a portal the user is told what to
install instead.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from PySide6.QtCore import SLOT, QObject, QUrl, Slot
from PySide6.QtDBus import QDBusConnection, QDBusMessage
from PySide6.QtGui import QImage

from desktop.gui.capture.frozen import Done, Failed, split_desktop

PORTAL_SERVICE = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SCREENSHOT_INTERFACE = "org.freedesktop.portal.Screenshot"
REQUEST_INTERFACE = "org.freedesktop.portal.Request"
NO_PORTAL = (
    "This Wayland session has no screenshot portal, so DeskLens cannot read the screen. "
    "Install xdg-desktop-portal and your desktop's backend (xdg-desktop-portal-gnome, -kde "
    "or -wlr), or log in to an X11 session."
)
DECLINED = "The screenshot was not taken (the request was declined or cancelled)."

# Qt's SLOT() form (connect() strips its method-kind prefix). Typed arguments: QtDBus then
# turns the results' a{sv} into a dict (a QDBusMessage's arguments leave it marshalled).
_RESPONSE_SLOT = SLOT("on_response(uint,QVariantMap)")
_pending: set[_PortalRequest] = set()  # alive until their Response comes


class _PortalRequest(QObject):
    def __init__(self, bus: QDBusConnection, done: Done, failed: Failed) -> None:
        super().__init__()
        self._bus = bus
        self._done = done
        self._failed = failed
        self.path = ""

    def send(self) -> None:
        token = "desklens_" + secrets.token_hex(6)
        sender = self._bus.baseService().lstrip(":").replace(".", "_")
        # The request's path is known before the call, so no Response can be missed.
        self.path = f"{PORTAL_PATH}/request/{sender}/{token}"
        # PySide6's stubs want the slot as bytes; the binding takes the SLOT() string.
        self._bus.connect("", self.path, REQUEST_INTERFACE, "Response", self, _RESPONSE_SLOT)  # type: ignore[call-overload]
        call = QDBusMessage.createMethodCall(
            PORTAL_SERVICE, PORTAL_PATH, SCREENSHOT_INTERFACE, "Screenshot"
        )
        call.setArguments(["", {"handle_token": token, "interactive": False, "modal": False}])
        reply = self._bus.call(call)
        if reply.type() == QDBusMessage.MessageType.ErrorMessage:
            self._end(error=f"{NO_PORTAL} ({reply.errorMessage() or reply.errorName()})")

    @Slot("uint", "QVariantMap")
    def on_response(self, code: int, results: dict) -> None:
        uri = str(results.get("uri", ""))
        if code != 0 or not uri:
            self._end(error=DECLINED)
            return
        path = Path(QUrl(uri).toLocalFile())
        image = QImage(str(path))
        if image.isNull():
            self._end(error=f"The portal's screenshot could not be read ({path.name}).")
            return
        self._end(image=image)

    def _end(self, *, error: str = "", image: QImage | None = None) -> None:
        self._bus.disconnect("", self.path, REQUEST_INTERFACE, "Response", self, _RESPONSE_SLOT)  # type: ignore[call-overload]  # as connect
        _pending.discard(self)
        if image is not None:
            self._done(split_desktop(image))
        else:
            self._failed(error)


def grab_through_portal(done: Done, failed: Failed) -> None:
    """Asks the portal for a picture of the whole desktop; `done` gets it cut per screen."""
    bus = QDBusConnection.sessionBus()
    if not bus.isConnected():
        failed(NO_PORTAL)
        return
    request = _PortalRequest(bus, done, failed)
    _pending.add(request)
    request.send()
