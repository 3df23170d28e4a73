"""Freezing the screens: one picture per screen, in its device pixels.

X11, Windows and macOS let an application read the screen (`QScreen.grabWindow(0)`); macOS
asks the user once for the Screen Recording permission. Wayland does not: there the XDG
desktop portal takes the picture (`portal.py`), which is asynchronous, so every grab answers
through callbacks.
"""

from __future__ import annotations

import sys

from PySide6.QtGui import QGuiApplication, QImage, QScreen

from desktop.gui.capture.frozen import Done, Failed, FrozenScreen

MACOS_PERMISSION = (
    "DeskLens could not read the screen. On macOS, allow it in System Settings > Privacy & "
    "Security > Screen Recording, then start DeskLens again."
)


def on_wayland() -> bool:
    return QGuiApplication.platformName().startswith("wayland")


def grab_screens(done: Done, failed: Failed) -> None:
    """Calls `done` with every screen frozen (at once, or later from the portal's answer),
    or `failed` with one sentence for the user."""
    if on_wayland():
        from desktop.gui.capture.portal import grab_through_portal

        grab_through_portal(done, failed)
        return
    if sys.platform == "darwin" and not _macos_may_record():
        failed(MACOS_PERMISSION)
        return
    frozen = [_grab(screen) for screen in QGuiApplication.screens()]
    if not frozen or all(_blank(shot.image) for shot in frozen):
        failed(MACOS_PERMISSION if sys.platform == "darwin" else "The screen could not be read.")
        return
    done(frozen)


def _grab(screen: QScreen) -> FrozenScreen:
    # grabWindow(0) returns the screen at its device pixels; its devicePixelRatio says the
    # scale, which the overlay uses to paint it sharp and to map the selection back.
    image = screen.grabWindow(0).toImage()
    return FrozenScreen(screen, screen.geometry(), image)


def _macos_may_record() -> bool:
    """macOS 10.15+: without Screen Recording the grab shows only the wallpaper, so ask first
    (CoreGraphics' preflight; the request adds DeskLens to the list in System Settings)."""
    import ctypes

    graphics = ctypes.cdll.LoadLibrary(
        "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"
    )
    graphics.CGPreflightScreenCaptureAccess.restype = ctypes.c_bool
    if graphics.CGPreflightScreenCaptureAccess():
        return True
    graphics.CGRequestScreenCaptureAccess()
    return False


def _blank(image: QImage) -> bool:
    """macOS without the permission returns the wallpaper or nothing at all; a null picture
    is what Qt gives elsewhere when the screen cannot be read."""
    return image.isNull() or image.width() == 0
