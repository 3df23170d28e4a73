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


def model_search_dirs() -> list[Path]:
    """Folders that hold converted models, most specific first."""
    override = os.environ.get(MODELS_DIR_ENV)
    if override:
        return [Path(override)]
    dirs = [user_data_dir() / "models"]
    dev = source_tree_models_dir()
    if dev is not None:
        dirs.insert(0, dev)
    return dirs
