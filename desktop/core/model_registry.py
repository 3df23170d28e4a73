"""Finds converted models (folders with a desklens.json) and picks the one to use."""

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
    """Every model folder under the search dirs; hidden (staging) folders are never listed."""
    entries = []
    for base in search_dirs if search_dirs is not None else paths.model_search_dirs():
        if not base.is_dir():
            continue
        for folder in sorted(base.iterdir()):
            if folder.name.startswith(".") or not (folder / MANIFEST_NAME).is_file():
                continue
            try:
                entries.append(ModelEntry(folder.name, folder, read_manifest(folder)))
            except ModelError as exc:
                entries.append(ModelEntry(folder.name, folder, None, str(exc)))
    return entries


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
