"""Finds converted models (folders with a desklens.json) and picks the one to use: for the
command line (`resolve_model`) and for the app at start-up (`choose_model`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from desktop.core import paths
from desktop.core.manifest import MANIFEST_NAME, Manifest, ModelError, read_manifest

DEFAULT_MODEL_ENV = "DESKLENS_MODEL"


@dataclass
class ModelEntry:
    name: str
    folder: Path
    manifest: Manifest | None
    problem: str | None = None  # why it cannot be used, if it cannot

    @property
    def size_bytes(self) -> int:
        return sum(f.size for f in self.manifest.files.values()) if self.manifest else 0


def find_models(search_dirs: Iterable[Path] | None = None) -> list[ModelEntry]:
    """Every model folder under the search dirs; hidden (staging) folders are never listed.
    A folder that cannot be read is listed with its problem: it never hides the others."""
    entries = []
    for base in search_dirs if search_dirs is not None else paths.model_search_dirs():
        for folder in _candidate_folders(base):
            try:
                entries.append(ModelEntry(folder.name, folder, read_manifest(folder)))
            except ModelError as exc:
                entries.append(ModelEntry(folder.name, folder, None, str(exc)))
    return entries


def _candidate_folders(base: Path) -> list[Path]:
    """Visible entries of `base` with a manifest (an unreadable entry counts: it says why)."""
    try:
        entries = sorted(base.iterdir()) if base.is_dir() else []
    except OSError:
        return []  # an unreadable models folder holds nothing we could load
    found = []
    for folder in entries:
        if folder.name.startswith("."):
            continue
        try:
            if (folder / MANIFEST_NAME).is_file():
                found.append(folder)
        except OSError:  # e.g. a folder without the permission to look inside
            found.append(folder)
    return found


def resolve_model(explicit: str | os.PathLike | None = None) -> Path:
    """The model folder to load: explicit path, $DESKLENS_MODEL, or the only usable model."""
    chosen = explicit or os.environ.get(DEFAULT_MODEL_ENV)
    if chosen:
        folder = Path(chosen).expanduser()
        if folder.is_dir():
            return folder
        by_name = [e.folder for e in find_models() if e.name == str(chosen)]
        if by_name:
            return by_name[0]
        raise ModelError(f"No model folder {chosen}. `desklens models` lists converted models.")
    usable = [e for e in find_models() if e.problem is None]
    if len(usable) == 1:
        return usable[0].folder
    if not usable:
        where = ", ".join(str(p) for p in paths.model_search_dirs())
        raise ModelError(
            f"No converted model found (looked in {where}). Download the ready INT8 model "
            "with `desklens models --download`, convert one with "
            "`python convert.py --model Qwen/Qwen3-VL-2B-Instruct`, or import a converted "
            "folder with `desklens models --import FOLDER`."
        )
    names = ", ".join(e.name for e in usable)
    raise ModelError(f"Several models are available ({names}); choose one with --model.")


@dataclass(frozen=True)
class ModelChoice:
    folder: Path | None  # None: nothing to load
    problem: str | None = None  # why a model that exists cannot be used


def choose_model(data_dir: Path, explicit: str | None = None, saved: str = "") -> ModelChoice:
    """The app's model: `explicit` (command line, else $DESKLENS_MODEL) must exist; the folder
    saved in the settings is used while it exists; otherwise the first usable model found. A
    broken model is reported rather than skipped silently, so the user learns why the app has
    no model."""
    explicit = explicit or os.environ.get(DEFAULT_MODEL_ENV)
    if explicit:
        folder = Path(explicit).expanduser()
        if folder.is_dir():
            return ModelChoice(folder)
        return ModelChoice(None, f"The model folder {folder} does not exist.")
    if saved and Path(saved).is_dir():
        return ModelChoice(Path(saved))
    entries = find_models(paths.model_search_dirs(data_dir))
    usable = [entry for entry in entries if entry.problem is None]
    if usable:
        return ModelChoice(usable[0].folder)
    if entries:
        return ModelChoice(None, entries[0].problem)
    return ModelChoice(None)
