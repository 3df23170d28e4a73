"""No model yet: the set-up panel, importing a converted folder through convert.py."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from test_gui_support import SIGNAL_TIMEOUT_MS

from desktop.gui.first_run import target_name
from desktop.gui.settings import SettingsStore

pytestmark = pytest.mark.gui
pytest_plugins = ["test_gui_support"]

IMPORT_TIMEOUT_MS = 600_000  # convert.py validates the import by loading it and generating


def test_first_run_panel_appears_without_a_model(qtbot, launch):
    window = launch()
    assert window.first_run_holder.isVisible()
    assert "none is set up yet" in window.first_run.explanation.text()
    assert window.status.state == "no model"
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
    assert "[convert]" in panel.log.toPlainText()

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
