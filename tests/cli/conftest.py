"""The command line's tests: a models folder holding the tiny converted model (and nothing
else), a screenshot to ask about, and an empty data folder of their own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def models_dir(tiny_ir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copytree(tiny_ir, folder / "tiny")
    monkeypatch.setenv("DESKLENS_MODELS_DIR", str(folder))
    monkeypatch.delenv("DESKLENS_MODEL", raising=False)
    return folder


@pytest.fixture
def screenshot(sample_image, tmp_path: Path) -> Path:
    path = tmp_path / "screenshot.png"
    sample_image.save(path)
    return path


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(folder))
    return folder
