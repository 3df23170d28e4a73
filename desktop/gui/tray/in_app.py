"""The tray icon and the global shortcut while the app's window is open (Settings > Tray):
the same menu as `desklens tray`, whose actions are the window's own capture (the warm OCR,
the window left where it is, as for `desklens capture`), its raising, and its closing."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QLockFile, QObject
from PySide6.QtWidgets import QWidget

from desktop.gui.flows.capturing import CaptureFlow
from desktop.gui.settings import AppSettings
from desktop.gui.tray.hotkey import GlobalHotkey
from desktop.gui.tray.menu import NO_TRAY, TrayMenu
from desktop.gui.widgets.basics import bring_to_front
from desktop.gui.widgets.notice import Notice

TRAY_LOCK = "tray.lock"  # standalone.py's: held while `desklens tray` runs on the folder


def tray_process_running(data_dir: Path) -> bool:
    """A `desklens tray` holds this data folder's tray lock (and so, likely, the keys)."""
    lock = QLockFile(str(data_dir / TRAY_LOCK))
    lock.setStaleLockTime(0)
    if lock.tryLock(0):
        lock.unlock()
        return False
    return True


class WindowTray(QObject):
    """The window's TrayTarget; `apply(settings)` shows or hides the icon and takes or gives
    back the keys."""

    def __init__(
        self, window: QWidget, capturing: CaptureFlow, notice: Notice, data_dir: Path
    ) -> None:
        super().__init__(window)
        self._window = window
        self._capturing = capturing
        self._notice = notice
        self._data_dir = data_dir
        self.menu = TrayMenu(self, self)
        self.hotkey = GlobalHotkey(self)
        self.hotkey.activated.connect(lambda: self.capture(""))
        self.hotkey.failed.connect(lambda sentence: notice.show_message(sentence, error=True))
        self._applied: tuple[bool, str] | None = None

    def apply(self, settings: AppSettings, *, quiet: bool = False) -> str:
        """Follows Settings > Tray; returns (and, unless `quiet`, shows) what does not work:
        no system tray, or a shortcut refused. `quiet` (the window starting) still shows a
        refused shortcut, which the user asked for and would miss."""
        wanted = (settings.tray, settings.global_shortcut.strip())
        if wanted == self._applied:
            return ""
        self._applied = wanted
        enabled, keys = wanted
        if not enabled:
            self.stop()
            return ""
        problems = [] if self.menu.show() else [NO_TRAY]
        shortcut_problem = self.hotkey.start(keys) if keys else ""
        if not keys:
            self.hotkey.stop()
        elif shortcut_problem and tray_process_running(self._data_dir):
            shortcut_problem = ""  # `desklens tray` holds the keys and hands captures here
        self.menu.set_shortcut_hint(self.hotkey.label)
        if shortcut_problem:
            problems.append(shortcut_problem)
        if problems and not (quiet and not shortcut_problem):
            self._notice.show_message(" ".join(problems), error=bool(shortcut_problem))
        return " ".join(problems)

    def stop(self) -> None:
        self.hotkey.stop()
        self.menu.hide()

    def capture(self, mode: str) -> None:
        self._capturing.start_for_command_line(mode)  # the window stays where it is

    def open_app(self) -> None:
        bring_to_front(self._window)

    def quit(self) -> None:
        self._window.close()
