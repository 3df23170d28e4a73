"""Every Qt object has a Qt owner or is deleted by Qt on the GUI thread (issue 55's crash
class): a dialog run with `exec()` is handed to Python by PySide6, so it is run through
`lifetimes.run_dialog`, which deletes it on purpose; no object of the window's tree is left
to Python's garbage collector; the collector runs on the GUI thread only while a window lives;
and what the workers hand across threads holds no Qt object."""

from __future__ import annotations

import ast
import gc
import threading
from pathlib import Path

import shiboken6
from gui_support import SIGNAL_TIMEOUT_MS, send, text_image
from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox

from desktop.gui.lifetimes import GuiCollector, run_dialog
from desktop.gui.panels.presets_editor import PresetsEditor, PresetsRow
from desktop.gui.panels.settings_dialog import SettingsDialog

ROOT = Path(__file__).resolve().parents[2]
GUI = ROOT / "desktop" / "gui"


def bare_exec_calls(path: Path) -> list[int]:
    """Lines calling `.exec()` with no argument on anything but the application: a dialog's
    exec, which must go through run_dialog (QMenu.exec takes a position)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "exec"
            and not node.args
            and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "app")
        ):
            lines.append(node.lineno)
    return lines


def test_every_dialog_is_run_through_run_dialog():
    found = {
        str(path.relative_to(ROOT)): bare_exec_calls(path)
        for path in GUI.rglob("*.py")
        if path.name != "lifetimes.py"
    }
    assert {name: lines for name, lines in found.items() if lines} == {}


def test_the_exec_finder_finds_a_dialogs_exec(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(d, app, menu):\n    app.exec()\n    menu.exec(p)\n    d.exec()\n")
    assert bare_exec_calls(module) == [4]


def test_worker_payloads_hold_no_qt_object():
    """The dataclasses the workers send across threads name no QObject type in their fields
    (a QImage is a value, safe to hand over; a QObject lives and dies on one thread)."""
    offenders = []
    for path in (GUI / "workers").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                "dataclass" in ast.unparse(d) for d in node.decorator_list
            ):
                for field in node.body:
                    if isinstance(field, ast.AnnAssign):
                        annotation = ast.unparse(field.annotation)
                        if any(_is_qobject(word) for word in _names(annotation)):
                            offenders.append(f"{path.name}:{node.name}.{ast.unparse(field.target)}")
    assert offenders == []


def _is_qobject(name: str) -> bool:
    from PySide6 import QtCore, QtGui, QtWidgets

    found = [getattr(module, name, None) for module in (QtCore, QtGui, QtWidgets)]
    return any(isinstance(c, type) and issubclass(c, QObject) for c in found)


def test_the_payload_check_tells_a_qobject_from_a_value():
    assert _is_qobject("QWidget") and _is_qobject("QTimer")
    assert not _is_qobject("QImage") and not _is_qobject("ImageRef")


def _names(annotation: str) -> list[str]:
    for mark in "[]|,.() ":
        annotation = annotation.replace(mark, " ")
    return [word for word in annotation.split() if word[:1].isupper()]


def python_owned(window) -> list[str]:
    return [
        f"{type(o).__name__} {o.objectName()!r}"
        for o in window.findChildren(QObject)
        if shiboken6.Shiboken.ownedByPython(o)
    ]


def close_modal(ok: bool) -> None:
    """Answers the next modal dialog: OK (for the prompts editor: Add, named) or Cancel."""

    def look() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QDialog):
            QTimer.singleShot(20, look)
            return
        if isinstance(dialog, PresetsEditor):
            dialog.add()
            dialog.name_edit.setText("Numbers")
            dialog.prompt_edit.setPlainText("List every number.")
        box = dialog.findChild(QDialogButtonBox)
        which = QDialogButtonBox.StandardButton.Ok if ok else QDialogButtonBox.StandardButton.Cancel
        box.button(which).click()

    QTimer.singleShot(20, look)


def test_settings_and_its_pages_are_deleted_once_closed_and_nothing_is_left_to_python(
    qtbot, launch
):
    window = launch()
    for ok in (True, False, True):
        close_modal(ok)
        window.open_settings()
    row_opened = []

    def open_prompts() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, SettingsDialog):
            QTimer.singleShot(20, open_prompts)
            return
        close_modal(True)
        dialog.findChildren(PresetsRow)[0].open_editor()  # nested: run_dialog too
        row_opened.append(True)
        dialog.accept()

    QTimer.singleShot(20, open_prompts)
    window.open_settings()
    assert row_opened and len(window.own_presets.book.presets) == 1
    qtbot.waitUntil(
        lambda: not window.findChildren(SettingsDialog) and not window.findChildren(PresetsEditor),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    assert python_owned(window) == []


def test_run_dialog_deletes_the_dialog_on_the_gui_thread(qtbot):
    parent = QDialog()
    qtbot.addWidget(parent)
    dialog = QDialog(parent)
    QTimer.singleShot(0, dialog.accept)
    assert run_dialog(dialog) == QDialog.DialogCode.Accepted
    destroyed = []
    dialog.destroyed.connect(lambda: destroyed.append(threading.current_thread()))
    qtbot.waitUntil(lambda: bool(destroyed), timeout=SIGNAL_TIMEOUT_MS)
    assert destroyed == [threading.main_thread()]
    assert parent.findChildren(QDialog) == []


def test_the_collector_runs_on_the_gui_thread_only_while_a_window_lives(qtbot, launch, tiny_ir):
    was_enabled = gc.isenabled()
    threads: list[str] = []

    def record(phase, _info) -> None:
        if phase == "start":
            threads.append(threading.current_thread().name)

    gc.callbacks.append(record)
    try:
        window = launch(model_dir=tiny_ir)
        assert not gc.isenabled() and window.collector.active
        send(qtbot, window, "What is the number?", [text_image("Invoice 4471")])
        window.extraction.extract_all()
        qtbot.waitUntil(lambda: not window.ocr.busy, timeout=SIGNAL_TIMEOUT_MS)
        qtbot.waitUntil(lambda: window.collector.collections > 0, timeout=SIGNAL_TIMEOUT_MS)
        window.close()
    finally:
        gc.callbacks.remove(record)
    assert threads and set(threads) == {threading.main_thread().name}
    assert gc.isenabled() == was_enabled


def test_a_collection_asked_from_another_thread_runs_on_the_gui_thread(qtbot):
    collector = GuiCollector()
    collector.start()
    threads: list[str] = []

    def record(phase, _info) -> None:
        if phase == "start":
            threads.append(threading.current_thread().name)

    gc.callbacks.append(record)
    done: list[bool] = []
    try:
        asker = threading.Thread(target=lambda: done.append(collector.request(30)))
        asker.start()
        qtbot.waitUntil(lambda: bool(done), timeout=SIGNAL_TIMEOUT_MS)
        asker.join()
    finally:
        gc.callbacks.remove(record)
        collector.stop()
    assert done == [True]
    assert threads and set(threads) == {threading.main_thread().name}
