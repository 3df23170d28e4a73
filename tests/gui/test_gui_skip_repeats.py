"""Settings > "Skip repeated areas": on by default, and turning it off reloads the model with
every image block read."""

from __future__ import annotations

from desktop.gui.settings import AppSettings, SettingsStore


def test_turning_skip_repeats_off_reloads_the_engine_without_it(qtbot, launch, tiny_ir):
    from desktop.gui.panels.settings_dialog import SKIP_REPEATS_HELP, SettingsDialog

    window = launch(model_dir=tiny_ir)
    assert window.engine.worker.engine.config.skip_repeats  # the default
    dialog = SettingsDialog(window.settings, ["CPU"], window)
    qtbot.addWidget(dialog)
    assert dialog.skip_check.isChecked() and "OCRBench" in SKIP_REPEATS_HELP
    dialog.skip_check.setChecked(False)
    new = dialog.result_settings()
    assert not new.skip_repeats
    try:
        window.apply_settings(new)
        assert window.status.state == "loading"
        qtbot.waitUntil(lambda: window.model_loaded, timeout=120_000)
        assert not window.engine.worker.engine.config.skip_repeats
        assert not SettingsStore(window.data_dir).load().skip_repeats
    finally:
        window.apply_settings(AppSettings(theme="light", model_dir=new.model_dir))
