"""A stand-in for xdg-desktop-portal's Screenshot interface on a private session bus, for
tests/gui/test_gui_portal.py: `python fake_portal.py IMAGE ok|decline`. It owns the portal's
name, answers Screenshot at once and then sends the request's Response signal, as the real
portal does once the user has agreed ("decline": response 1, as when the user refuses)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, QTimer, QUrl, Slot
from PySide6.QtDBus import QDBusConnection

PORTAL_PATH = "/org/freedesktop/portal/desktop"


class Screenshot(QObject):
    def __init__(self, bus: QDBusConnection, image: Path, decline: bool) -> None:
        super().__init__()
        self.bus = bus
        self.image = image
        self.decline = decline

    @Slot(str, "QVariantMap")
    def Screenshot(self, _parent: str, options: dict) -> None:  # noqa: N802 (the D-Bus name)
        token = str(options.get("handle_token", ""))
        # The request path holds the caller's unique name; on this private bus the callers
        # are every other connection, so the Response goes to each of their paths.
        names = self.bus.interface().registeredServiceNames().value()
        callers = [n for n in names if n.startswith(":") and n != self.bus.baseService()]
        QTimer.singleShot(0, lambda: self.respond(token, callers))

    def respond(self, token: str, callers: list[str]) -> None:
        # gdbus sends the Response with the portal's exact types (u, a{sv}); PySide cannot
        # write a uint32.
        uri = QUrl.fromLocalFile(str(self.image)).toString()
        results = "@a{sv} {}" if self.decline else f"{{'uri': <'{uri}'>}}"
        for caller in callers:
            path = f"{PORTAL_PATH}/request/{caller.lstrip(':').replace('.', '_')}/{token}"
            subprocess.run(
                ["gdbus", "emit", "--session", "--object-path", path, "--signal",
                 "org.freedesktop.portal.Request.Response",
                 f"uint32 {1 if self.decline else 0}", results],
                check=True, timeout=30,
            )  # fmt: skip


def main() -> int:
    app = QCoreApplication(sys.argv[:1])
    bus = QDBusConnection.sessionBus()
    portal = Screenshot(bus, Path(sys.argv[1]), sys.argv[2] == "decline")
    exported = bus.registerObject(
        PORTAL_PATH, "org.freedesktop.portal.Screenshot", portal,
        QDBusConnection.RegisterOption.ExportAllSlots,
    )  # fmt: skip
    if not (exported and bus.registerService("org.freedesktop.portal.Desktop")):
        print("failed", bus.lastError().message(), flush=True)
        return 1
    print("ready", flush=True)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
