"""model_setup's parts on their own: sub-model interface checks and name adaptation, and the
progress meter's speed and time left."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from desktop.core.model_setup.errors import ModelRejected
from desktop.core.model_setup.install import import_folder
from desktop.core.model_setup.interfaces import check_interfaces
from desktop.core.model_setup.progress import ProgressMeter, describe, format_duration

LM = "openvino_language_model.xml"


def _copy_renaming(tiny_ir: Path, folder: Path, old: str, new: str) -> Path:
    shutil.copytree(tiny_ir, folder, ignore=shutil.ignore_patterns("desklens.json"))
    xml = folder / LM
    text = xml.read_text()
    assert text.count(f'names="{old}"') == 1
    xml.write_text(text.replace(f'names="{old}"', f'names="{new}"'))
    return folder


def test_our_own_export_fits_the_engine_unchanged(tiny_ir, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_ir, copy)
    before = (copy / LM).read_bytes()
    assert check_interfaces(copy) == []
    assert (copy / LM).read_bytes() == before


def test_a_known_other_spelling_is_adapted_and_the_model_runs(tiny_ir, tmp_path):
    source = _copy_renaming(tiny_ir, tmp_path / "other-exporter", "inputs_embeds", "input_embeds")
    lines: list[str] = []
    installed = import_folder(source, tmp_path / "models" / "m", say=lines.append)
    [renamed] = installed.renamed
    assert (renamed.submodel, renamed.found, renamed.expected) == (
        "openvino_language_model", "input_embeds", "inputs_embeds"
    )  # fmt: skip
    assert 'names="input_embeds,inputs_embeds"' in (installed.folder / LM).read_text()
    assert any(line.startswith("Validation passed") for line in lines)


def test_an_input_the_engine_cannot_feed_is_one_sentence(tiny_ir, tmp_path):
    folder = _copy_renaming(tiny_ir, tmp_path / "odd", "visual_pos_masks", "image_mask")
    with pytest.raises(ModelRejected) as caught:
        check_interfaces(folder, exporter="9.9.9")
    message = str(caught.value)
    assert "openvino_language_model" in message and "input visual_pos_masks" in message
    assert "optimum-intel 9.9.9" in message and "\n" not in message


def test_the_meter_measures_speed_over_recent_seconds_and_time_left():
    now = [0.0]
    meter = ProgressMeter(total=100_000_000, clock=lambda: now[0])
    first = meter.update(10_000_000)  # resumed: earlier bytes do not count as speed
    assert first.speed == 0 and first.eta_s is None
    now[0] = 2.0
    second = meter.update(30_000_000, "model.bin")
    assert second.speed == pytest.approx(10_000_000)
    assert second.eta_s == pytest.approx(7.0)
    assert describe(second) == "30.0 MB of 100.0 MB, 10.0 MB/s, 7 s left"
    now[0] = 60.0
    assert meter.update(30_000_000).speed == 0  # stalled for a minute: the old burst is gone
    assert format_duration(125) == "2 min 05 s" and format_duration(None) == "--"
