"""Which converted model the app loads at start-up (no OpenVINO: manifests are JSON)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from desktop.core import paths
from desktop.core.model_registry import DEFAULT_MODEL_ENV, find_models


@dataclass(frozen=True)
class ModelChoice:
    folder: Path | None  # None: nothing to load
    problem: str | None = None  # why a model that exists cannot be used


def models_dir(data_dir: Path) -> Path:
    """Where the app converts and imports models to."""
    return data_dir / "models"


def search_dirs(data_dir: Path) -> list[Path]:
    override = os.environ.get(paths.MODELS_DIR_ENV)
    if override:
        return [Path(override)]
    dev = paths.source_tree_models_dir()
    return [*([dev] if dev else []), models_dir(data_dir)]


def choose_model(data_dir: Path, explicit: str | None = None, saved: str = "") -> ModelChoice:
    """`explicit` (command line, else $DESKLENS_MODEL) must exist; the folder saved in the
    settings is used while it exists; otherwise the first usable model found. A broken model
    is reported rather than skipped silently, so the user learns why the app has no model."""
    explicit = explicit or os.environ.get(DEFAULT_MODEL_ENV)
    if explicit:
        folder = Path(explicit).expanduser()
        if folder.is_dir():
            return ModelChoice(folder)
        return ModelChoice(None, f"The model folder {folder} does not exist.")
    if saved and Path(saved).is_dir():
        return ModelChoice(Path(saved))
    entries = find_models(search_dirs(data_dir))
    usable = [entry for entry in entries if entry.problem is None]
    if usable:
        return ModelChoice(usable[0].folder)
    if entries:
        return ModelChoice(None, entries[0].problem)
    return ModelChoice(None)
