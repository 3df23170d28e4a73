"""`desklens tray`: a process with the tray icon and the global shortcut, and nothing heavy
until the first capture (no model; the OCR engine is built on the first "copy" without an
open window). One per data folder: a second one says so and exits."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from PySide6.QtCore import QLockFile, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from desktop import APP_NAME
from desktop.cli import exit_codes
from desktop.gui.settings import SettingsStore
from desktop.gui.termination import quit_on_termination
from desktop.gui.tray.hotkey import GlobalHotkey
from desktop.gui.tray.menu import NO_TRAY, TrayMenu
from desktop.gui.tray.process import TrayProcess
from desktop.gui.widgets.icons import app_icon

LOCK_FILE = "tray.lock"
NOTHING_TO_CLICK = (
    "error: with neither a tray icon nor a global shortcut there is nothing to click."
)


def _say(line: str) -> None:
    print(f"desklens tray: {line}", file=sys.stderr, flush=True)


def run_tray(data_dir: Path, shortcut: str | None, *, use_shortcut: bool = True) -> int:
    """Runs until Quit or a terminating signal. `shortcut`: None for the setting's."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = QLockFile(str(data_dir / LOCK_FILE))
    lock.setStaleLockTime(0)  # held for the tray's whole life: stale only if its process died
    if not lock.tryLock(0):
        pid = lock.getLockInfo()[0]
        _say(f"the DeskLens tray is already running (process {pid}): use its icon or shortcut.")
        return exit_codes.FAILED
    app = _application()
    closer = quit_on_termination(app)
    target = TrayProcess(data_dir)
    menu = TrayMenu(target)
    hotkey = GlobalHotkey()
    hotkey.activated.connect(lambda: target.capture(""))
    has_tray = menu.show()

    def lost(sentence: str) -> None:  # the portal's answer comes after start()
        _say(f"no global shortcut: {sentence}")
        if not has_tray:
            _say(NOTHING_TO_CLICK)
            app.exit(exit_codes.FAILED)

    hotkey.failed.connect(lost)
    if not has_tray:
        _say(NO_TRAY)
    has_shortcut = False
    if use_shortcut:
        keys = shortcut if shortcut is not None else SettingsStore(data_dir).load().global_shortcut
        problem = hotkey.start(keys) if keys.strip() else "none is set (Settings > Tray)."
        has_shortcut = not problem
        _say(f"no global shortcut: {problem}" if problem else f"{hotkey.label} captures a region.")
        menu.set_shortcut_hint(hotkey.label)
    if not has_tray and not has_shortcut:
        _say(NOTHING_TO_CLICK)
        lock.unlock()
        return exit_codes.FAILED
    code = app.exec()
    hotkey.stop()
    menu.hide()
    target.reader.close()
    del closer
    lock.unlock()
    return code


def _application() -> QApplication:
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    app = QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setDesktopFileName("desklens")
    app.setWindowIcon(app_icon())
    app.setQuitOnLastWindowClosed(False)  # an overlay or a note closing is not the end
    return app
