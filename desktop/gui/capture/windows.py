"""The windows on the screen when a capture starts, for "click a window to take it whole".

Qt knows only its own windows, so this asks the platform: Xlib on X11 (through ctypes: no
extra package) and user32 on Windows. Wayland tells no application where other windows are,
and macOS needs another permission for their names only; there a click takes the whole screen.
Rectangles are in device pixels of the desktop, topmost window first.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication

logger = logging.getLogger(__name__)

IS_VIEWABLE = 2  # XWindowAttributes.map_state of a window that is on the screen


class _XWindowAttributes(ctypes.Structure):
    _fields_ = [  # noqa: RUF012 (ctypes wants a class attribute)
        ("x", ctypes.c_int),
        ("y", ctypes.c_int),
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("border_width", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("visual", ctypes.c_void_p),
        ("root", ctypes.c_ulong),
        ("class_", ctypes.c_int),
        ("bit_gravity", ctypes.c_int),
        ("win_gravity", ctypes.c_int),
        ("backing_store", ctypes.c_int),
        ("backing_planes", ctypes.c_ulong),
        ("backing_pixel", ctypes.c_ulong),
        ("save_under", ctypes.c_int),
        ("colormap", ctypes.c_ulong),
        ("map_installed", ctypes.c_int),
        ("map_state", ctypes.c_int),
        ("all_event_masks", ctypes.c_long),
        ("your_event_mask", ctypes.c_long),
        ("do_not_propagate_mask", ctypes.c_long),
        ("override_redirect", ctypes.c_int),
        ("screen", ctypes.c_void_p),
    ]


def visible_windows() -> list[QRect]:
    """Top-level windows on the screen, topmost first; [] where the platform does not say."""
    try:
        if QGuiApplication.platformName() == "xcb":
            return _x11_windows()
        if sys.platform == "win32":
            return _win32_windows()
    except (OSError, AttributeError) as exc:  # no libX11, an odd display: clicks take screens
        logger.info("window list unavailable: %s", exc)
    return []


def _x11_windows() -> list[QRect]:
    name = ctypes.util.find_library("X11")
    if name is None:
        return []
    xlib = ctypes.cdll.LoadLibrary(name)
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XDefaultRootWindow.restype = ctypes.c_ulong
    xlib.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    display = xlib.XOpenDisplay(None)
    if not display:
        return []
    try:
        return _x11_children(xlib, display, xlib.XDefaultRootWindow(display))
    finally:
        xlib.XCloseDisplay(ctypes.c_void_p(display))


def _x11_children(xlib: ctypes.CDLL, display: int, root: int) -> list[QRect]:
    root_back, parent = ctypes.c_ulong(), ctypes.c_ulong()
    children, count = ctypes.POINTER(ctypes.c_ulong)(), ctypes.c_uint()
    display_p = ctypes.c_void_p(display)
    if not xlib.XQueryTree(
        display_p,
        ctypes.c_ulong(root),
        ctypes.byref(root_back),
        ctypes.byref(parent),
        ctypes.byref(children),
        ctypes.byref(count),
    ):
        return []
    rects = []
    for index in range(count.value):  # bottom to top
        attributes = _XWindowAttributes()
        child = ctypes.c_ulong(children[index])
        if not xlib.XGetWindowAttributes(display_p, child, ctypes.byref(attributes)):
            continue
        if attributes.map_state == IS_VIEWABLE and not attributes.override_redirect:
            rects.append(QRect(attributes.x, attributes.y, attributes.width, attributes.height))
    if children:
        xlib.XFree(children)
    return rects[::-1]


def _win32_windows() -> list[QRect]:
    from ctypes import wintypes

    user32 = ctypes.windll.user32  # type: ignore[attr-defined]
    rects = []
    window = user32.GetTopWindow(None)
    while window:  # z-order, topmost first
        rect = wintypes.RECT()
        if user32.IsWindowVisible(window) and not user32.IsIconic(window):
            user32.GetWindowRect(window, ctypes.byref(rect))
            if rect.right > rect.left and rect.bottom > rect.top:
                rects.append(
                    QRect(rect.left, rect.top, rect.right - rect.left, rect.bottom - rect.top)
                )
        window = user32.GetWindow(window, 2)  # GW_HWNDNEXT
    return rects
