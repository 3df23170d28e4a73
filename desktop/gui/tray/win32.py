"""Windows: the native hot-key API (RegisterHotKey, through ctypes). With no window handle the
WM_HOTKEY message goes to the registering thread's queue, the GUI thread's, where Qt's event
dispatcher hands it to this native event filter."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from PySide6.QtCore import QAbstractNativeEventFilter, QByteArray, QCoreApplication

from desktop.gui.tray.keys import Shortcut, ShortcutUnavailable

WM_HOTKEY = 0x0312
HOTKEY_ID = 0xD15C  # ours, within the application's range (0x0000-0xBFFF is also fine)
MOD_ALT, MOD_CONTROL, MOD_SHIFT, MOD_WIN, MOD_NOREPEAT = 0x1, 0x2, 0x4, 0x8, 0x4000
ERROR_HOTKEY_ALREADY_REGISTERED = 1409
_MODS = {"alt": MOD_ALT, "ctrl": MOD_CONTROL, "shift": MOD_SHIFT, "super": MOD_WIN}


class Msg(ctypes.Structure):  # wintypes.MSG, spelled out so this module imports everywhere
    _fields_ = [
        ("hwnd", ctypes.c_void_p), ("message", ctypes.c_uint), ("wParam", ctypes.c_size_t),
        ("lParam", ctypes.c_ssize_t), ("time", ctypes.c_ulong), ("x", ctypes.c_long),
        ("y", ctypes.c_long),
    ]  # fmt: skip


class WindowsHotkey(QAbstractNativeEventFilter):
    def __init__(self, shortcut: Shortcut, on_activated: Callable[[], None]) -> None:
        super().__init__()
        self.shortcut = shortcut
        self._on_activated = on_activated
        self._registered = False

    def start(self) -> None:
        user32 = ctypes.WinDLL("user32", use_last_error=True)  # type: ignore[attr-defined]
        modifiers = MOD_NOREPEAT | sum(_MODS[m] for m in self.shortcut.modifiers)
        if not user32.RegisterHotKey(None, HOTKEY_ID, modifiers, self.shortcut.windows_vk):
            error = ctypes.get_last_error()  # type: ignore[attr-defined]
            if error == ERROR_HOTKEY_ALREADY_REGISTERED:
                raise ShortcutUnavailable(
                    f"{self.shortcut.label} is already taken by another program: close that "
                    "program, or choose another shortcut (Settings > Tray, or `desklens tray "
                    "--shortcut KEYS`)."
                )
            raise ShortcutUnavailable(
                f"Windows refused the shortcut {self.shortcut.label} (error {error})."
            )
        self._registered = True
        app = QCoreApplication.instance()
        if app is not None:
            app.installNativeEventFilter(self)

    def stop(self) -> None:
        if not self._registered:
            return
        self._registered = False
        ctypes.WinDLL("user32").UnregisterHotKey(None, HOTKEY_ID)  # type: ignore[attr-defined]
        app = QCoreApplication.instance()
        if app is not None:
            app.removeNativeEventFilter(self)

    def nativeEventFilter(
        self, eventType: QByteArray | bytes | bytearray | memoryview, message: int, /
    ) -> object:
        name = eventType.data() if isinstance(eventType, QByteArray) else bytes(eventType)
        if name == b"windows_generic_MSG":
            msg = Msg.from_address(int(message))
            if msg.message == WM_HOTKEY and msg.wParam == HOTKEY_ID:
                self._on_activated()
                return True, 0
        return False, 0
