"""Settings > Model > A server (issue 39): Test connection asks before anything goes to the
address, a bare address's added /v1 is said, a refused connection is a sentence without
"[Errno 111]". An address that cannot be used leaves the focus in its field (a guard: the
reported jump was not reproduced offscreen)."""

from __future__ import annotations

import socket

from gui_support import SIGNAL_TIMEOUT_MS
from misbehaving_server import MODEL, StandInServer
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop.gui.panels.settings_dialog import SettingsDialog


def open_dialog(qtbot, window) -> SettingsDialog:
    models = window.models
    dialog = SettingsDialog(
        window.settings, models.devices, window, window.local_api, window.own_presets,
        models.server, models.checker,
    )  # fmt: skip
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.source.server_radio.click()
    return dialog


def answer_consent(monkeypatch, yes: bool) -> list[str]:
    asked: list[str] = []

    def question(_parent, _title, text, *_args):
        asked.append(text)
        return QMessageBox.StandardButton.Yes if yes else QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


def run_test(qtbot, dialog: SettingsDialog, url: str) -> str:
    rows = dialog.source
    rows.url_edit.clear()
    rows.url_edit.insert(url)
    qtbot.mouseClick(rows.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(rows.test_button.isEnabled, timeout=SIGNAL_TIMEOUT_MS)
    return rows.result_label.text()


def test_test_connection_asks_first_and_says_the_added_path(qtbot, launch, monkeypatch):
    window = launch()
    dialog = open_dialog(qtbot, window)
    with StandInServer("models") as server:
        bare = server.url.removesuffix("/v1")
        host = bare.split("/")[2]
        asked = answer_consent(monkeypatch, yes=False)
        assert run_test(qtbot, dialog, bare) == f"Not tested: nothing was sent to {host}."
        assert len(asked) == 1 and host in asked[0]
        assert server.requests == []  # declined: the server was never contacted

        asked = answer_consent(monkeypatch, yes=True)
        said = run_test(qtbot, dialog, bare)
        assert said.startswith(f"Connected: 1 model ({MODEL})")
        assert f"The address used is {bare}/v1: /v1, the usual API path, was added." in said
        assert [request[:2] for request in server.requests] == [("GET", "/v1/models")]
        run_test(qtbot, dialog, bare)
        assert len(asked) == 1  # agreed once for this address: not asked again


def unused_port() -> int:
    """A port nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_refused_connection_is_a_sentence_without_errno(qtbot, launch, monkeypatch):
    port = unused_port()
    window = launch()
    dialog = open_dialog(qtbot, window)
    answer_consent(monkeypatch, yes=True)
    said = run_test(qtbot, dialog, f"http://127.0.0.1:{port}/v1")
    assert said == (
        f"Could not reach the server at 127.0.0.1:{port}: the connection was refused "
        "(is the server running, on that port?)."
    )
    assert "Errno" not in said


def test_an_address_that_cannot_be_used_keeps_the_focus_in_its_field(qtbot, launch):
    window = launch()
    dialog = open_dialog(qtbot, window)
    rows = dialog.source
    rows.url_edit.setFocus()
    qtbot.waitUntil(rows.url_edit.hasFocus)
    qtbot.keyClicks(rows.url_edit, "ftp://files")
    qtbot.keyClick(rows.url_edit, Qt.Key.Key_Return)  # OK, from the keyboard
    qtbot.waitUntil(lambda: not rows.busy, timeout=SIGNAL_TIMEOUT_MS)
    assert rows.result_label.text().startswith("'ftp://files' is not a server address")
    assert dialog.isVisible() and QApplication.focusWidget() is rows.url_edit


def test_test_connection_keeps_the_focus_on_its_button(qtbot, launch, monkeypatch):
    """Disabling the focused button while it tests handed the focus to the next field, Max
    answer length: from the keyboard, the focus stays on the button (the result line holds it
    while the test runs)."""
    port = unused_port()
    window = launch()
    dialog = open_dialog(qtbot, window)
    answer_consent(monkeypatch, yes=True)
    rows = dialog.source
    rows.url_edit.setText(f"http://127.0.0.1:{port}/v1")
    dialog.activateWindow()
    rows.test_button.setFocus()
    qtbot.waitUntil(rows.test_button.hasFocus)
    qtbot.keyClick(rows.test_button, Qt.Key.Key_Space)
    assert not rows.test_button.isEnabled()  # the test is running
    assert QApplication.focusWidget() is rows.result_label
    qtbot.waitUntil(rows.test_button.isEnabled, timeout=SIGNAL_TIMEOUT_MS)
    assert rows.result_label.text().startswith("Could not reach the server")
    assert QApplication.focusWidget() is rows.test_button
