"""No model yet: the set-up panel; downloading from a stand-in hub on 127.0.0.1 (with Pause,
Cancel and resume), importing a converted folder, converting."""

from __future__ import annotations

import sys

import pytest
from gui_support import SIGNAL_TIMEOUT_MS
from PySide6.QtCore import Qt

from desktop.core.manifest import verify_model_dir
from desktop.core.model_setup.staging import DOWNLOAD_PREFIX
from desktop.gui.panels.first_run import target_name
from desktop.gui.settings import SettingsStore
from devkit.hub_server import LARGE_BYTES, LARGE_FILE, REPO_ID, hub_env

TARGET = REPO_ID.split("/")[1]

IMPORT_TIMEOUT_MS = 600_000  # convert.py validates the import by loading it and generating


def test_first_run_panel_appears_without_a_model(qtbot, launch):
    window = launch()
    assert window.first_run_holder.isVisible()
    assert "none is set up yet" in window.first_run.explanation.text()
    assert window.status.state == "no model"
    assert window.first_run.download.download_button.isEnabled()
    assert window.first_run.convert_button.isEnabled()
    assert window.first_run.import_button.isEnabled()
    assert not window.model_loaded
    # The rest of the window is usable meanwhile.
    assert window.composer.editor.isEnabled()
    assert window.extract_all_button.isVisible()


def test_importing_a_converted_folder_loads_it(qtbot, launch, tiny_ir):
    window = launch()
    panel = window.first_run
    with qtbot.waitSignal(panel.model_ready, timeout=IMPORT_TIMEOUT_MS) as ready:
        panel.start(str(tiny_ir))
        assert panel.progress_box.isVisible()
        assert not panel.form.isEnabled()
    imported = window.data_dir / "models" / tiny_ir.name
    assert ready.args == [str(imported)]
    assert (imported / "desklens.json").is_file()
    assert "Validation passed" in panel.log.toPlainText()

    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    assert not window.first_run_holder.isVisible()
    assert window.status.model_label.text() == tiny_ir.name
    assert SettingsStore(window.data_dir).load().model_dir == str(imported)


def test_a_failed_conversion_says_why_and_the_form_comes_back(qtbot, launch, tmp_path):
    window = launch()
    panel = window.first_run
    not_a_model = tmp_path / "holiday-photos"
    not_a_model.mkdir()
    panel.start(str(not_a_model))
    qtbot.waitUntil(lambda: not panel.running, timeout=IMPORT_TIMEOUT_MS)
    assert panel.result_label.isVisible()
    assert "neither a Hugging Face checkpoint" in panel.result_label.text()
    assert not panel.result_label.text().startswith("convert.py")  # the sentence, no prefix
    assert panel.form.isEnabled()
    assert not panel.progress_box.isVisible()
    assert not window.model_loaded


def test_cancel_stops_the_converter(qtbot, launch, tiny_ir):
    window = launch()
    panel = window.first_run
    panel.start(str(tiny_ir))  # an import takes seconds (it validates): Cancel comes first
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.running, timeout=IMPORT_TIMEOUT_MS)
    assert panel.result_label.text() == "Cancelled. Nothing was written."
    assert not (window.data_dir / "models" / tiny_ir.name).exists()
    assert panel.form.isEnabled()
    assert not window.model_loaded


# A child that ends with 1 on SIGINT, as Python does when the signal lands while it imports.
FAILS_ON_INTERRUPT = (
    "import signal, sys, threading\n"
    "signal.signal(signal.SIGINT, lambda *_: sys.exit(1))\n"
    "print('started', flush=True)\n"
    "threading.Event().wait(60)\n"
)


def test_cancel_is_a_cancel_whatever_the_interrupted_child_exits_with(qtbot, launch):
    window = launch()
    panel = window.first_run
    with qtbot.waitSignal(panel.process.line, timeout=SIGNAL_TIMEOUT_MS):
        panel.process.start([sys.executable, "-c", FAILS_ON_INTERRUPT])
    panel.cancel()
    qtbot.waitUntil(lambda: not panel.running, timeout=SIGNAL_TIMEOUT_MS)
    assert panel.result_label.text() == "Cancelled. Nothing was written."


@pytest.mark.parametrize(
    ("source", "fmt", "expected"),
    [
        ("Qwen/Qwen3-VL-2B-Instruct", "int8", "Qwen3-VL-2B-Instruct-int8"),
        ("Qwen/Qwen3-VL-4B-Instruct/", "int4", "Qwen3-VL-4B-Instruct-int4"),
    ],
)
def test_target_name_for_hub_ids(source, fmt, expected):
    assert target_name(source, fmt) == expected


def test_target_name_keeps_an_imported_folder_name(tmp_path):
    ir = tmp_path / "my-model-ov"
    ir.mkdir()
    (ir / "openvino_language_model.xml").write_text("<net/>")
    checkpoint = tmp_path / "my-checkpoint"
    checkpoint.mkdir()
    assert target_name(str(ir), "") == "my-model-ov"
    assert target_name(str(checkpoint), "int4") == "my-checkpoint-int4"


@pytest.fixture
def online(hub, tmp_path, monkeypatch):
    """The app's environment pointed at the stand-in hub (conftest keeps tests offline)."""
    for key, value in hub_env(hub.url, tmp_path).items():
        if key.startswith("HF_"):
            monkeypatch.setenv(key, value)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    return hub


def _large_file_bytes(box) -> int:
    last = box._last
    if last is None or last.file != LARGE_FILE:
        return 0
    return last.done - (last.total - LARGE_BYTES)


def test_one_click_downloads_validates_and_loads_the_model(qtbot, launch, online):
    window = launch()
    box = window.first_run.download
    box.repo_edit.setText(REPO_ID)
    with qtbot.waitSignal(window.first_run.model_ready, timeout=IMPORT_TIMEOUT_MS) as ready:
        qtbot.mouseClick(box.download_button, Qt.MouseButton.LeftButton)
        assert box.cancel_button.isVisible() and not window.first_run.form.isEnabled()
    folder = window.data_dir / "models" / TARGET
    assert ready.args == [str(folder)]
    verify_model_dir(folder, hashes=True)
    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    assert not window.first_run_holder.isVisible()
    assert SettingsStore(window.data_dir).load().model_dir == str(folder)


@pytest.mark.parametrize("stop", ["pause", "cancel"])
def test_pause_or_cancel_mid_file_then_download_continues(qtbot, launch, online, stop):
    window = launch()
    box = window.first_run.download
    box.repo_edit.setText(REPO_ID)
    online.stall = (LARGE_FILE, LARGE_BYTES - 100_000)
    qtbot.mouseClick(box.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: _large_file_bytes(box) >= 2 << 20, timeout=IMPORT_TIMEOUT_MS)
    button = box.pause_button if stop == "pause" else box.cancel_button
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.running, timeout=IMPORT_TIMEOUT_MS)
    models = window.data_dir / "models"
    if stop == "pause":
        assert box.download_button.text() == "Resume"
        assert box.status_label.text().startswith("Paused.")
    else:
        assert box.status_label.text().startswith("Cancelled. No model was installed.")
        assert "Download continues from there" in box.status_label.text()
    assert [p.name for p in models.iterdir()] == [f"{DOWNLOAD_PREFIX}{TARGET}"]  # hidden only
    assert not window.model_loaded

    online.release.set()
    online.stall = None
    online.log.clear()
    with qtbot.waitSignal(window.first_run.model_ready, timeout=IMPORT_TIMEOUT_MS):
        qtbot.mouseClick(box.download_button, Qt.MouseButton.LeftButton)
    [resumed] = online.gets(LARGE_FILE)
    assert resumed.range is not None  # continued by range, not fetched again
    assert [r for r in online.log if r.method == "GET" and r.path.endswith(".xml")] == []


def test_a_failed_download_says_why_in_one_sentence(qtbot, launch, online):
    window = launch()
    box = window.first_run.download
    box.repo_edit.setText("nobody/nothing-here")
    qtbot.mouseClick(box.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.running, timeout=IMPORT_TIMEOUT_MS)
    assert box.status_label.text().startswith("nobody/nothing-here was not found on")
    # The button says what the failures' sentences ask for ("… and Download again").
    assert box.download_button.text() == "Download again" and box.download_button.isVisible()
    assert window.first_run.form.isEnabled() and not window.model_loaded


def test_converting_after_a_failed_download_clears_its_error(qtbot, launch, online, tmp_path):
    """The download's red sentence stayed during a Convert (and after it, beside the
    conversion's own error): a new action clears the old error."""
    window = launch()
    panel, box = window.first_run, window.first_run.download
    box.repo_edit.setText("nobody/nothing-here")
    qtbot.mouseClick(box.download_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not box.running, timeout=IMPORT_TIMEOUT_MS)
    assert box.status_label.isVisible() and box.status_label.objectName() == "errorText"
    not_a_model = tmp_path / "holiday-photos"
    not_a_model.mkdir()
    panel.source_edit.setText(str(not_a_model))
    qtbot.mouseClick(panel.convert_button, Qt.MouseButton.LeftButton)
    assert panel.running and panel.progress_box.isVisible()
    assert not box.status_label.isVisible() and box.status_label.objectName() != "errorText"
    assert box.download_button.text() == "Download"
    qtbot.waitUntil(lambda: not panel.running, timeout=IMPORT_TIMEOUT_MS)
    assert "neither a Hugging Face checkpoint" in panel.result_label.text()
    assert not box.status_label.isVisible()  # only the conversion's error is shown
