"""The tray's menu, by its actions: each one triggered as a click on it would, against the
`desklens tray` process's own capture (the real overlay, dragged with real mouse events, the
real OCR, the real clipboard and note) and a real OCR service standing in for the open app
window (its capture and open requests, over the socket)."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from gui_support import SIGNAL_TIMEOUT_MS, text_image
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtWidgets import QApplication

from desktop.core.ocr.service import OcrReply, OcrRequest, OcrService, default_endpoint
from desktop.gui.capture.frozen import FrozenScreen
from desktop.gui.capture.open_app import EXTRACT_ENV
from desktop.gui.capture.overlay import PICK_BOXES_ENV
from desktop.gui.capture.toast import SHOWN_MS
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.tray.menu import CAPTURE_ASK, CAPTURE_TEXT, NO_TRAY, OPEN_APP, QUIT, TrayMenu
from desktop.gui.tray.process import TrayProcess, chosen_action
from desktop.gui.tray.settings_row import TrayRow
from desktop.gui.widgets.thumbnails import qimage_to_png

TEXT = "Invoice 2041 total 118.40 EUR"
TEXT_AT = QPoint(60, 120)  # where the text picture sits on the frozen screen
TEXT_SIZE = (720, 140)


def frozen_screen() -> FrozenScreen:
    """The screen as a capture freezes it: white, with TEXT in a TrueType font."""
    screen = QGuiApplication.primaryScreen()
    image = QImage(screen.geometry().size(), QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.white)
    picture = QImage.fromData(_png(text_image(TEXT, TEXT_SIZE)))
    painter = QPainter(image)
    painter.drawImage(TEXT_AT, picture)
    painter.end()
    return FrozenScreen(screen, screen.geometry(), image)


def _png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


class Tray:
    """The menu over a TrayProcess whose launches and quit are recorded, not run."""

    def __init__(self, data_dir: Path) -> None:
        self.launched: list[list[str]] = []
        self.launch_env: list[dict[str, str]] = []
        self.quits = 0
        self.grabs = 0
        self.process = TrayProcess(
            data_dir, grab=self._grab, launch=self._launch, quit_app=self._quit,
        )  # fmt: skip
        self.menu = TrayMenu(self.process)

    def _launch(self, args: Sequence[str], env: Mapping[str, str]) -> None:
        self.launched.append(list(args))
        self.launch_env.append(dict(env))

    def _grab(self, done, _failed) -> None:
        self.grabs += 1
        done([frozen_screen()])

    def _quit(self) -> None:
        self.quits += 1

    def trigger(self, name: str) -> None:
        self.menu.actions[name].trigger()

    def drag(self, qtbot, start: QPoint, end: QPoint, modifier=Qt.KeyboardModifier.NoModifier):
        overlay = self.process.picker.overlays[0]
        qtbot.mousePress(overlay, Qt.MouseButton.LeftButton, modifier, start)
        qtbot.mouseMove(overlay, (start + end) / 2)
        qtbot.mouseMove(overlay, end)
        qtbot.mouseRelease(overlay, Qt.MouseButton.LeftButton, modifier, end)


@pytest.fixture
def data_dir(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = isolated_env / "data"
    folder.mkdir()
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(folder))
    return folder


@pytest.fixture
def tray(qtbot, data_dir: Path) -> Iterator[Tray]:
    tray = Tray(data_dir)
    yield tray
    tray.process.picker.close()
    tray.process.toast.hide()
    tray.process.reader.close()


class OpenWindow:
    """A real OCR service at the tray's endpoint answering as an open DeskLens window."""

    def __init__(self, data_dir: Path, *, takes_captures: bool = True) -> None:
        self.captures: list[str] = []
        self.opened: list[list[str]] = []
        self.extracted: list[list[str]] = []  # the files it was asked to show the text of
        self.service = OcrService(
            self._refuse, endpoint=default_endpoint(data_dir),
            on_capture=self._capture if takes_captures else None, on_open=self._open,
            on_extract=self.extracted.append,
        )  # fmt: skip

    @staticmethod
    def _refuse(request: OcrRequest, _stopping: threading.Event) -> OcrReply:
        raise AssertionError(f"no OCR request expected: {request}")

    def _capture(self, mode: str) -> None:
        self.captures.append(mode)

    def _open(self, paths: list[str]) -> None:
        self.opened.append(paths)


@pytest.fixture
def open_window(data_dir: Path) -> Iterator[OpenWindow]:
    window = OpenWindow(data_dir)
    window.service.start()
    yield window
    window.service.stop()


def test_the_menu_has_the_four_actions_in_order(tray: Tray) -> None:
    names = [action.text() for action in tray.menu.menu.actions() if not action.isSeparator()]
    assert names == [CAPTURE_TEXT, CAPTURE_ASK, OPEN_APP, QUIT]
    assert tray.menu.icon.contextMenu() is tray.menu.menu


def test_capture_to_text_copies_the_regions_text_and_shows_the_note(qtbot, tray: Tray) -> None:
    clipboard = QGuiApplication.clipboard()
    clipboard.setText("before")
    with qtbot.waitSignal(tray.process.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
        tray.trigger(CAPTURE_TEXT)
    start = TEXT_AT + QPoint(4, 4)
    end = TEXT_AT + QPoint(TEXT_SIZE[0] - 4, TEXT_SIZE[1] - 4)
    with qtbot.waitSignal(tray.process.copied, timeout=SIGNAL_TIMEOUT_MS) as copied:
        tray.drag(qtbot, start, end)
    assert copied.args == [TEXT]
    assert clipboard.text() == TEXT
    toast = tray.process.toast
    assert toast.isVisible() and toast.label.text() == f"Copied: {TEXT}"
    toast.buttons["Undo"].click()  # the note's Undo puts back what was copied before
    assert clipboard.text() == "before"
    assert not tray.process.picker.active and tray.launched == []


def test_capture_to_ask_hands_the_crop_to_the_open_window(
    qtbot, tray: Tray, data_dir: Path
) -> None:
    # A window that takes no capture requests (`desklens serve`'s service says the same) but
    # takes files: the tray captures and hands it the crop.
    window = OpenWindow(data_dir, takes_captures=False)
    window.service.start()
    try:
        with qtbot.waitSignal(tray.process.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
            tray.trigger(CAPTURE_ASK)
        with qtbot.waitSignal(tray.process.attached, timeout=SIGNAL_TIMEOUT_MS) as attached:
            tray.drag(qtbot, QPoint(10, 20), QPoint(210, 120))
    finally:
        window.service.stop()
    [path] = attached.args
    assert window.opened == [[path]] and tray.launched == []
    crop = QImage(path)
    assert (crop.width(), crop.height()) == (200, 100)
    assert qimage_to_png(crop) == qimage_to_png(frozen_screen().image.copy(10, 20, 200, 100))


def test_capture_to_ask_without_a_window_starts_the_app_with_the_crop(qtbot, tray: Tray) -> None:
    with qtbot.waitSignal(tray.process.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
        tray.trigger(CAPTURE_ASK)
    with qtbot.waitSignal(tray.process.attached, timeout=SIGNAL_TIMEOUT_MS) as attached:
        tray.drag(qtbot, QPoint(10, 20), QPoint(110, 70))
    assert tray.launched == [["gui", attached.args[0]]]
    # the app it starts opens the box picker on the crop, as `desklens capture --ask` does
    assert tray.launch_env == [{PICK_BOXES_ENV: attached.args[0]}]


def test_the_shortcuts_capture_follows_the_setting_and_shift_swaps_it(
    qtbot, tray: Tray, data_dir: Path
) -> None:
    store = SettingsStore(data_dir)
    store.save(replace(store.load(), capture_action="ask"))
    shift = Qt.KeyboardModifier.ShiftModifier
    with qtbot.waitSignal(tray.process.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
        tray.process.capture("")  # the global shortcut's capture: the setting, here "ask"
    with qtbot.waitSignal(tray.process.copied, timeout=SIGNAL_TIMEOUT_MS) as copied:
        tray.drag(qtbot, QPoint(10, 20), QPoint(110, 70), shift)  # white: no text there
    assert copied.args == [""] and tray.launched == []
    assert tray.process.toast.label.text() == "No text found in the region."
    assert chosen_action("", "ask", shift) == "copy"
    assert chosen_action("copy", "ask", Qt.KeyboardModifier.NoModifier) == "copy"
    assert chosen_action("ask", "copy", shift) == "copy"


def test_an_open_window_takes_the_capture_itself(qtbot, tray: Tray, open_window) -> None:
    with qtbot.waitSignal(tray.process.handed_over, timeout=SIGNAL_TIMEOUT_MS):
        tray.trigger(CAPTURE_TEXT)
    with qtbot.waitSignal(tray.process.handed_over, timeout=SIGNAL_TIMEOUT_MS):
        tray.trigger(CAPTURE_ASK)
    assert open_window.captures == ["copy", "ask"]
    assert tray.grabs == 0 and not tray.process.picker.active


def test_open_app_raises_the_open_window_or_starts_the_app(tray: Tray, data_dir: Path) -> None:
    tray.trigger(OPEN_APP)
    assert tray.launched == [["gui"]]
    window = OpenWindow(data_dir)
    window.service.start()
    try:
        tray.trigger(OPEN_APP)
    finally:
        window.service.stop()
    assert window.opened == [[]]  # no files: the window comes to the front
    assert tray.launched == [["gui"]]


def test_quit_ends_the_tray_and_a_capture_under_way(qtbot, tray: Tray) -> None:
    with qtbot.waitSignal(tray.process.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
        tray.trigger(CAPTURE_TEXT)
    tray.trigger(QUIT)
    assert tray.quits == 1
    assert not tray.process.picker.active


def test_a_failed_grab_is_told_in_the_note(qtbot, data_dir: Path) -> None:
    def grab(_done, failed) -> None:
        failed("The screen could not be read.")

    process = TrayProcess(
        data_dir, grab=grab, launch=lambda _args, _env: None, quit_app=lambda: None
    )
    with qtbot.waitSignal(process.failed, timeout=SIGNAL_TIMEOUT_MS) as failed:
        process.capture("copy")
    assert failed.args == ["The screen could not be read."]
    assert process.toast.isVisible()
    assert process.toast.label.text() == "The screen could not be read."
    process.toast.hide()
    process.reader.close()


def test_the_app_shows_the_same_menu_over_its_own_capture(qtbot, launch) -> None:
    window = launch()
    assert not window.settings.tray and not window.tray.menu.icon.isVisible()  # off by default
    problem = window.tray.apply(replace(window.settings, tray=True))
    # Offscreen Qt has neither a tray nor keys to take: both said, in the window's notice.
    assert problem.startswith(NO_TRAY)
    assert "no global shortcut on Qt's 'offscreen' platform" in problem
    assert window.notice.text() == problem
    names = [a.text() for a in window.tray.menu.menu.actions() if not a.isSeparator()]
    assert names == [CAPTURE_TEXT, CAPTURE_ASK, OPEN_APP, QUIT]
    with qtbot.waitSignal(window.capturing.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
        window.tray.menu.actions[CAPTURE_TEXT].trigger()  # the window's capture, its OCR
    assert window.isVisible()  # left where it is, as for `desklens capture`
    with qtbot.waitSignal(window.capturing.cancelled, timeout=SIGNAL_TIMEOUT_MS):
        window.capturing.picker.cancel()
    window.showMinimized()
    window.tray.menu.actions[OPEN_APP].trigger()
    qtbot.waitUntil(lambda: window.isVisible() and not window.isMinimized())
    window.tray.menu.actions[QUIT].trigger()
    assert not window.isVisible() and window.engine.thread.isFinished()


def test_settings_tray_row_checks_the_shortcut_as_typed(qtbot) -> None:
    row = TrayRow(AppSettings(tray=True, global_shortcut="ctrl+alt+shift+t"))
    qtbot.addWidget(row)
    assert row.enabled and row.shortcut == "Ctrl+Alt+Shift+T"
    row.edit.setText("Ctrl+Banana")
    assert row.problem.text().startswith("'Banana' in the shortcut 'Ctrl+Banana' is not a key")
    assert row.shortcut == "Ctrl+Banana"  # kept as typed: the window says why it takes no keys
    row.edit.setText("")
    assert row.shortcut == "" and row.problem.text() == ""
    row.check.setChecked(False)  # the keys stay editable: `desklens tray` takes them too
    row.edit.setText("win+F9")
    assert not row.enabled and row.shortcut == "Super+F9"


def _copy_text(qtbot, tray: Tray) -> None:
    with qtbot.waitSignal(tray.process.overlay_shown, timeout=SIGNAL_TIMEOUT_MS):
        tray.trigger(CAPTURE_TEXT)
    start = TEXT_AT + QPoint(4, 4)
    end = TEXT_AT + QPoint(TEXT_SIZE[0] - 4, TEXT_SIZE[1] - 4)
    with qtbot.waitSignal(tray.process.copied, timeout=SIGNAL_TIMEOUT_MS):
        tray.drag(qtbot, start, end)


def test_the_notes_show_hands_the_crop_to_the_open_window_for_its_text(
    qtbot, tray: Tray, data_dir: Path
) -> None:
    """Show opened the box picker on the crop; docs/GUI.md: the window, with the extraction."""
    window = OpenWindow(data_dir, takes_captures=False)
    window.service.start()
    try:
        _copy_text(qtbot, tray)
        with qtbot.waitSignal(tray.process.attached, timeout=SIGNAL_TIMEOUT_MS) as attached:
            tray.process.toast.buttons["Show"].click()
    finally:
        window.service.stop()
    assert window.extracted == window.opened == [[attached.args[0]]]
    assert tray.launched == []


def test_the_notes_show_without_a_window_starts_the_app_to_show_the_text(qtbot, tray: Tray) -> None:
    _copy_text(qtbot, tray)
    with qtbot.waitSignal(tray.process.attached, timeout=SIGNAL_TIMEOUT_MS) as attached:
        tray.process.toast.buttons["Show"].click()
    assert tray.launch_env == [{EXTRACT_ENV: attached.args[0]}]


def test_the_note_stays_long_enough_to_act_on_and_while_the_pointer_is_over_it(
    qtbot, tray: Tray
) -> None:
    """It went after a few seconds, whatever the pointer did."""
    from PySide6.QtCore import QEvent, QPointF
    from PySide6.QtGui import QEnterEvent

    assert SHOWN_MS >= 15_000
    _copy_text(qtbot, tray)
    toast = tray.process.toast
    timer = toast.findChild(QTimer)
    assert toast.isVisible() and timer.isActive() and timer.interval() == SHOWN_MS
    QApplication.sendEvent(toast, QEnterEvent(QPointF(5, 5), QPointF(5, 5), QPointF(5, 5)))
    assert not timer.isActive()  # no countdown while the pointer is over it
    QApplication.sendEvent(toast, QEvent(QEvent.Type.Leave))
    assert toast.isVisible() and timer.isActive()
