"""App factory (the NormCap pattern): `create_app()` builds everything without entering the
event loop, so tests drive the real window; `run()` is what `desklens` starts."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QLockFile, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop import APP_NAME, __version__
from desktop.core import exit_codes, paths
from desktop.core.errors import describe
from desktop.core.history import HistoryError, HistoryStore
from desktop.gui.main_window import MainWindow
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.termination import close_on_termination
from desktop.gui.theme import apply_theme
from desktop.gui.widgets.icons import app_icon
from desktop.gui.widgets.roles import install_roles

HISTORY_FOLDER = "history"

logger = logging.getLogger(__name__)


def data_dir_for(data_dir: str | os.PathLike | None) -> Path:
    """The argument, else $DESKLENS_DATA_DIR, else the per-user app data folder (the
    same one `QStandardPaths.AppLocalDataLocation` names, shared with the CLI)."""
    return Path(data_dir).expanduser() if data_dir else paths.user_data_dir()


def _application() -> QApplication:
    existing = QApplication.instance()
    if existing is not None:
        assert isinstance(existing, QApplication)
        return existing
    # Fractional scaling (125 %, 150 %) is common on Windows laptops: do not round it.
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    app = QApplication(sys.argv[:1])
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName(APP_NAME)
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("desklens")
    app.setWindowIcon(app_icon())
    return app


def create_app(
    data_dir: str | os.PathLike | None = None,
    model_dir: str | os.PathLike | None = None,
    settings: AppSettings | None = None,
    files: Sequence[str | os.PathLike] = (),
) -> tuple[QApplication, MainWindow]:
    """Builds the application and shows the main window; the model starts loading in the
    background. `settings` replaces the stored preferences for this run (and is saved);
    `files` are attached as if dropped. Raises `HistoryError` when the history folder cannot
    be opened."""
    app = _application()
    install_roles()
    folder = data_dir_for(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    settings_store = SettingsStore(folder)
    given = settings
    if settings is None:
        settings = settings_store.load()
    apply_theme(app, settings.theme, settings.font_size)
    store = HistoryStore(folder / HISTORY_FOLDER)
    window = MainWindow(
        folder, store, settings_store, settings, str(model_dir) if model_dir else None
    )
    if given is not None:
        window.save_settings(given)
    window.show()
    if store.notice:
        window.notice.show_message(store.notice, error=True, persistent=True)
    window.start_background_work()
    if files:  # "Open with": the files start a chat of their own
        window.open_files(list(files))
    else:
        window.open_last_chat()
    return app, window


def run(
    data_dir: str | os.PathLike | None = None,
    model_dir: str | os.PathLike | None = None,
    files: Sequence[str | os.PathLike] = (),
) -> int:
    """Starts the GUI and returns its exit code."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    lock = data_folder_lock(data_dir_for(data_dir))
    if isinstance(lock, str):
        print(f"desklens: error: {lock}", file=sys.stderr)
        return exit_codes.FAILED
    try:
        app, window = create_app(data_dir, model_dir, files=files)
    except HistoryError as exc:
        _application()
        QMessageBox.critical(None, APP_NAME, str(exc))
        return 1
    closer = close_on_termination(window)
    logger.info("%s %s started (data folder %s)", APP_NAME, __version__, window.data_dir)
    code = app.exec()
    del closer, window  # the window's workers are joined in closeEvent, before the app goes
    lock.unlock()
    return code


def data_folder_lock(folder: Path) -> QLockFile | str:
    """The lock that keeps a second app off this data folder (one history, one model in
    memory, one Local API port), or the sentence why it cannot be had. The open window
    normally takes a second launch's files before this (gui_cmd): the lock is for a window
    still starting, or one whose text extraction (which answers the command line) failed."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"The data folder {folder} cannot be made: {describe(exc)}"
    lock = QLockFile(str(folder / "app.lock"))
    lock.setStaleLockTime(0)  # held for the app's whole life: stale only if its process died
    if lock.tryLock(0):
        return lock
    pid, _host, _app = lock.getLockInfo()
    return (
        f"DeskLens is already open on the data folder {folder} (process {pid}), but it does "
        "not answer yet (still starting, or its text extraction failed to start): use that "
        "window, or close it and start DeskLens again."
    )
