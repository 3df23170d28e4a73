"""The Wayland path: the screen through the XDG desktop portal's Screenshot interface, over
QtDBus, against a fake portal (tests/support/fake_portal.py) on a private dbus-daemon."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QColor, QGuiApplication, QImage

from desktop.gui.capture import portal

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "support" / "fake_portal.py"


@pytest.fixture
def session_bus(private_bus: str, monkeypatch: pytest.MonkeyPatch):
    """The app's QDBusConnection.sessionBus() on the private bus (a connection of its own,
    under the standard name, so the code under test is unchanged)."""
    from PySide6.QtDBus import QDBusConnection

    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", private_bus)
    bus = QDBusConnection.connectToBus(private_bus, "desklens-test-bus")
    assert bus.isConnected()
    monkeypatch.setattr(QDBusConnection, "sessionBus", staticmethod(lambda: bus))
    yield bus
    QDBusConnection.disconnectFromBus("desklens-test-bus")


def start_fake(private_bus: str, image: Path, mode: str) -> subprocess.Popen:
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": private_bus}
    fake = subprocess.Popen([sys.executable, str(FAKE), str(image), mode], env=env,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert fake.stdout is not None
    assert fake.stdout.readline().strip() == "ready"  # owns the portal's name now
    return fake


def grab(qtbot) -> dict:
    outcome: dict = {}
    portal.grab_through_portal(
        lambda frozen: outcome.setdefault("frozen", frozen),
        lambda sentence: outcome.setdefault("error", sentence),
    )
    qtbot.waitUntil(lambda: bool(outcome), timeout=30_000)
    return outcome


def desktop_picture(path: Path) -> QImage:
    """The whole desktop at twice its logical size (a 200 % session), a red mark at (10, 20)."""
    screen = QGuiApplication.primaryScreen().geometry()
    image = QImage(screen.width() * 2, screen.height() * 2, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    image.setPixelColor(20, 40, QColor("red"))
    assert image.save(str(path))
    return image


def test_without_a_portal_the_user_is_told_what_to_install(qtbot, session_bus) -> None:
    assert grab(qtbot)["error"].startswith(portal.NO_PORTAL)


def test_the_portals_picture_is_cut_into_screens(qtbot, session_bus, private_bus, tmp_path):
    picture = desktop_picture(tmp_path / "desktop.png")
    fake = start_fake(private_bus, tmp_path / "desktop.png", "ok")
    try:
        outcome = grab(qtbot)
    finally:
        fake.terminate()
        fake.wait(timeout=30)
    assert "error" not in outcome, outcome
    [frozen] = outcome["frozen"]  # the offscreen platform has one screen
    assert frozen.image.size() == picture.size()
    assert frozen.scale == 2.0  # device pixels per logical one, from the picture's size
    assert frozen.image.pixelColor(20, 40) == QColor("red")


def test_a_declined_request_says_so(qtbot, session_bus, private_bus, tmp_path) -> None:
    desktop_picture(tmp_path / "desktop.png")
    fake = start_fake(private_bus, tmp_path / "desktop.png", "decline")
    try:
        assert grab(qtbot)["error"] == portal.DECLINED
    finally:
        fake.terminate()
        fake.wait(timeout=30)
