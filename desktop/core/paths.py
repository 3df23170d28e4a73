"""Where DeskLens keeps its data and looks for converted models (no Qt: the CLI uses this too)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from desktop import APP_NAME

DATA_DIR_ENV = "DESKLENS_DATA_DIR"
MODELS_DIR_ENV = "DESKLENS_MODELS_DIR"


def user_data_dir() -> Path:
    """Per-user writable folder (history, settings, models of an installed app)."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / APP_NAME


def source_tree_models_dir() -> Path | None:
    """`ov_models/` beside the source tree in a development checkout, else None."""
    candidate = Path(__file__).resolve().parents[2] / "ov_models"
    return candidate if candidate.is_dir() else None


def models_dir(data_dir: Path | None = None) -> Path:
    """Where the app downloads, converts and imports models to: `models/` in its data folder."""
    return (data_dir or user_data_dir()) / "models"


def model_search_dirs(data_dir: Path | None = None) -> list[Path]:
    """Folders that hold converted models, most specific first ($DESKLENS_MODELS_DIR alone
    when set; else the source tree's ov_models/, then the data folder's models/)."""
    override = os.environ.get(MODELS_DIR_ENV)
    if override:
        return [Path(override)]
    dev = source_tree_models_dir()
    return [*([dev] if dev else []), models_dir(data_dir)]
