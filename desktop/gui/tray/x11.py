"""X11: a real key grab on the root window (XGrabKey through ctypes on libX11, which every X11
desktop has; no new Python package).

The grab has its own X connection, watched by a QSocketNotifier, so the GUI thread never
blocks on it. It is taken once per combination of the lock keys (Caps Lock, Num Lock, Scroll
Lock), which X treats as modifiers too: the shortcut must work whatever they are. The action
fires when the key is let go: by then the grab that the press activated has ended, so the
capture overlay can take the keyboard itself. Another client holding the same combination
answers BadAccess, asynchronously: the grab is synced and the error caught to say so.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import itertools
import os
from collections.abc import Callable

from PySide6.QtCore import QObject, QSocketNotifier

from desktop.gui.tray.keys import Shortcut, ShortcutUnavailable

KEY_PRESS, KEY_RELEASE = 2, 3
GRAB_MODE_ASYNC = 1
BAD_ACCESS = 10
SHIFT, LOCK, CONTROL, MOD1, MOD4 = 1, 2, 4, 8, 64
_MASKS = {"shift": SHIFT, "ctrl": CONTROL, "alt": MOD1, "super": MOD4}


class _XKeyEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int), ("serial", ctypes.c_ulong), ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p), ("window", ctypes.c_ulong), ("root", ctypes.c_ulong),
        ("subwindow", ctypes.c_ulong), ("time", ctypes.c_ulong), ("x", ctypes.c_int),
        ("y", ctypes.c_int), ("x_root", ctypes.c_int), ("y_root", ctypes.c_int),
        ("state", ctypes.c_uint), ("keycode", ctypes.c_uint), ("same_screen", ctypes.c_int),
    ]  # fmt: skip


class _XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("xkey", _XKeyEvent), ("pad", ctypes.c_long * 24)]


class _XErrorEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int), ("display", ctypes.c_void_p), ("resourceid", ctypes.c_ulong),
        ("serial", ctypes.c_ulong), ("error_code", ctypes.c_ubyte),
        ("request_code", ctypes.c_ubyte), ("minor_code", ctypes.c_ubyte),
    ]  # fmt: skip


class _XModifierKeymap(ctypes.Structure):
    _fields_ = [("max_keypermod", ctypes.c_int), ("modifiermap", ctypes.POINTER(ctypes.c_ubyte))]


_ErrorHandler = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_XErrorEvent))


def _libx11() -> ctypes.CDLL:
    name = ctypes.util.find_library("X11") if os.name == "posix" else None
    try:
        lib = ctypes.CDLL("libX11.so.6")
    except OSError:
        if name is None:
            raise ShortcutUnavailable(
                "The X11 library (libX11) is not installed, so no global shortcut can be "
                "grabbed: install libx11-6."
            ) from None
        lib = ctypes.CDLL(name)
    display, window, keysym = ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong
    signatures: dict[str, tuple[list, object]] = {
        "XOpenDisplay": ([ctypes.c_char_p], display),
        "XCloseDisplay": ([display], ctypes.c_int),
        "XDefaultRootWindow": ([display], window),
        "XConnectionNumber": ([display], ctypes.c_int),
        "XStringToKeysym": ([ctypes.c_char_p], keysym),
        "XKeysymToKeycode": ([display, keysym], ctypes.c_ubyte),
        "XGrabKey": ([display, ctypes.c_int, ctypes.c_uint, window, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int], ctypes.c_int),
        "XUngrabKey": ([display, ctypes.c_int, ctypes.c_uint, window], ctypes.c_int),
        "XSync": ([display, ctypes.c_int], ctypes.c_int),
        "XPending": ([display], ctypes.c_int),
        "XNextEvent": ([display, ctypes.POINTER(_XEvent)], ctypes.c_int),
        "XSetErrorHandler": ([ctypes.c_void_p], ctypes.c_void_p),
        "XGetModifierMapping": ([display], ctypes.POINTER(_XModifierKeymap)),
        "XFreeModifiermap": ([ctypes.POINTER(_XModifierKeymap)], ctypes.c_int),
        "XkbSetDetectableAutoRepeat": ([display, ctypes.c_int, ctypes.c_void_p], ctypes.c_int),
    }  # fmt: skip
    for function, (arguments, result) in signatures.items():
        getattr(lib, function).argtypes = arguments
        getattr(lib, function).restype = result
    return lib


class X11Grab(QObject):
    """The shortcut grabbed on the X display; `on_activated` runs on the GUI thread."""

    def __init__(self, shortcut: Shortcut, on_activated: Callable[[], None]) -> None:
        super().__init__()
        self.shortcut = shortcut
        self._on_activated = on_activated
        self._x = _libx11()
        self._display: int | None = None
        self._root = 0
        self._keycode = 0
        self._grabbed: list[int] = []  # modifier masks grabbed
        self._pressed = False
        self._notifier: QSocketNotifier | None = None

    def start(self) -> None:
        """Grabs the keys; raises ShortcutUnavailable with the reason when it cannot."""
        x = self._x
        display = x.XOpenDisplay(None)
        if not display:
            where = os.environ.get("DISPLAY") or "not set"
            raise ShortcutUnavailable(f"The X display could not be opened (DISPLAY is {where}).")
        self._display = display
        self._root = x.XDefaultRootWindow(display)
        keysym = x.XStringToKeysym(self.shortcut.x11_keysym.encode())
        self._keycode = x.XKeysymToKeycode(display, keysym) if keysym else 0
        if not self._keycode:
            self.stop()
            raise ShortcutUnavailable(f"This keyboard layout has no {self.shortcut.key} key.")
        # Held keys repeat as presses only (no fake releases), so one hold is one capture.
        x.XkbSetDetectableAutoRepeat(display, 1, None)
        base = sum(self._mask_of(m) for m in self.shortcut.modifiers)
        errors = self._grab_all(base)
        if BAD_ACCESS in errors:
            self.stop()
            raise ShortcutUnavailable(
                f"{self.shortcut.label} is already taken by another program on this X display: "
                "close that program, or choose another shortcut (Settings > Tray, or "
                "`desklens tray --shortcut KEYS`)."
            )
        if errors:
            self.stop()
            raise ShortcutUnavailable(f"The X server refused the key grab (X error {errors[0]}).")
        self._notifier = QSocketNotifier(x.XConnectionNumber(display), QSocketNotifier.Type.Read)
        self._notifier.activated.connect(self._read_events)

    def stop(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        if self._display is None:
            return
        for mask in self._grabbed:
            self._x.XUngrabKey(self._display, self._keycode, mask, self._root)
        self._grabbed = []
        self._x.XCloseDisplay(self._display)  # also releases any grab left
        self._display = None

    def _grab_all(self, base: int) -> list[int]:
        """Grabs `base` with every combination of the lock keys; the X errors it raised."""
        x, display = self._x, self._display
        errors: list[int] = []

        def record(_display: int, event: ctypes._Pointer) -> int:
            errors.append(event.contents.error_code)
            return 0

        handler = _ErrorHandler(record)  # kept referenced until it is uninstalled below
        x.XSync(display, 0)  # earlier errors are not ours
        previous = x.XSetErrorHandler(ctypes.cast(handler, ctypes.c_void_p))
        try:
            for mask in self._lock_variants(base):
                x.XGrabKey(
                    display, self._keycode, mask, self._root, 0, GRAB_MODE_ASYNC, GRAB_MODE_ASYNC
                )
                self._grabbed.append(mask)
            x.XSync(display, 0)  # the errors arrive now, through `record`
        finally:
            x.XSetErrorHandler(previous)
        return errors

    def _mask_of(self, modifier: str) -> int:
        """Alt and Super are Mod1 and Mod4 on nearly every layout; the keyboard's own
        modifier map says where it differs."""
        keysym = {"alt": "Alt_L", "super": "Super_L"}.get(modifier)
        mapped = self._modifier_of(keysym) if keysym else []
        return mapped[0] if mapped else _MASKS[modifier]

    def _lock_variants(self, base: int) -> list[int]:
        locks = [LOCK, *self._modifier_of("Num_Lock"), *self._modifier_of("Scroll_Lock")]
        locks = [m for m in dict.fromkeys(locks) if not m & base]
        return [
            base | sum(combo)
            for size in range(len(locks) + 1)
            for combo in itertools.combinations(locks, size)
        ]

    def _modifier_of(self, keysym_name: str) -> list[int]:
        """The modifier mask a lock key is mapped to (Num Lock is usually Mod2)."""
        x, display = self._x, self._display
        keycode = x.XKeysymToKeycode(display, x.XStringToKeysym(keysym_name.encode()))
        mapping = x.XGetModifierMapping(display)
        if not keycode or not mapping:
            return []
        try:
            per = mapping.contents.max_keypermod
            codes = mapping.contents.modifiermap
            return [1 << i for i in range(8) for j in range(per) if codes[i * per + j] == keycode]
        finally:
            x.XFreeModifiermap(mapping)

    def _read_events(self) -> None:
        x, display = self._x, self._display
        if display is None:
            return
        event = _XEvent()
        while x.XPending(display):
            x.XNextEvent(display, ctypes.byref(event))
            if event.type == KEY_PRESS and event.xkey.keycode == self._keycode:
                self._pressed = True
            elif event.type == KEY_RELEASE and event.xkey.keycode == self._keycode:
                if self._pressed:
                    self._on_activated()
                self._pressed = False
