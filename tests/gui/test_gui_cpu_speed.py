"""Settings > This CPU: the precisions the engine measured at its first load on this CPU, and
"Measure again", which reloads the model and measures on the engine's thread (issue 60)."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_this_cpu_shows_the_choice_and_measures_again(qtbot, launch, tiny_ir, monkeypatch):
    from desktop.core.engine import tuning
    from desktop.gui.panels.settings_dialog import SettingsDialog

    # bf16 is asked for whatever the CPU (left out where it cannot run): the row and the
    # reload are what is tested. The data folder's own choices file, none known yet.
    monkeypatch.setenv(tuning.PRECISIONS_ENV, "f32,bf16")
    monkeypatch.delenv(tuning.CHOICES_ENV, raising=False)
    monkeypatch.setattr(tuning, "_known", {})
    measured: list[str] = []
    real = tuning.measure

    def measure(engine, precision, kept):
        measured.append(precision)
        return real(engine, precision, kept)

    monkeypatch.setattr(tuning, "measure", measure)
    window = launch(model_dir=tiny_ir)
    first = list(measured)
    assert first[:1] == ["f32"]
    sentence = window.models.precisions
    assert sentence.startswith("vision encoder") and "measured on" in sentence, sentence
    chosen = window.engine.worker.engine.precision_choice
    assert sentence == chosen.sentence()

    dialog = SettingsDialog(
        window.settings, ["CPU"], window, speed=(sentence, window.models.measure_again)
    )
    qtbot.addWidget(dialog)
    row = dialog.speed_row
    assert "measured on" in row.label.text() and row.button.isEnabled()
    qtbot.mouseClick(row.button, Qt.MouseButton.LeftButton)
    assert not row.button.isEnabled() and "Measuring again" in row.label.text()
    qtbot.waitUntil(lambda: measured == first * 2, timeout=120_000)
    qtbot.waitUntil(lambda: window.model_loaded, timeout=120_000)
    assert window.models.precisions.startswith("vision encoder")
