"""The command line's tests: a models folder holding the tiny converted model (and nothing
else), and a screenshot to ask about."""

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
