"""The one way a folder of OpenVINO IR becomes a model: check it, write desklens.json,
validate it with the engine, then move it into place. Used after an export (convert.py), an
import of a folder and a download."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from desktop.core import atomic, paths
from desktop.core.bounded_json import read_json_object
from desktop.core.manifest import MANIFEST_NAME, build_manifest, write_manifest
from desktop.core.model_setup import checks
from desktop.core.model_setup.errors import SetupError
from desktop.core.model_setup.interfaces import Renamed, check_interfaces
from desktop.core.model_setup.staging import (
    check_free_space,
    clean_leftovers,
    folder_size,
    move_into_place,
    staging_folder,
)

Say = Callable[[str], None]


@dataclass
class Installed:
    folder: Path
    weight_format: str
    validation: str  # e.g. "4 tokens in 0.3 s"
    renamed: list[Renamed] = field(default_factory=list)


def default_models_dir() -> Path:
    """Where new models go: $DESKLENS_MODELS_DIR, `ov_models/` of a source checkout, or the
    user data folder's `models/` (what an installed app uses)."""
    return paths.model_search_dirs()[0]


def set_max_pixels(folder: Path, max_pixels: int) -> None:
    """Writes the default image pixel budget into the preprocessor config."""
    path = folder / "preprocessor_config.json"
    config = read_json_object(path)
    config.setdefault("size", {})["longest_edge"] = max_pixels
    if "max_pixels" in config:
        config["max_pixels"] = max_pixels
    atomic.write_text(path, json.dumps(config, indent=2) + "\n")


def prepare_target(target: Path, force: bool, say: Say) -> None:
    """Creates the models folder, removes leftovers of killed runs, refuses to overwrite."""
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in clean_leftovers(target.parent):
        say(f"Removed a leftover from an interrupted run: {leftover.name}")
    if os.path.lexists(target) and not force:  # a link, even a dangling one, counts
        raise SetupError(f"{target} already exists. Pass --force to replace it.", exit_code=2)


def finish_ir_folder(
    staging: Path,
    target: Path,
    *,
    source: str,
    imported: bool,
    versions: dict[str, str] | None = None,
    weight_format: str | None = None,
    max_pixels: int | None = None,
    force: bool = False,
    say: Say = print,
    extra: dict | None = None,
) -> Installed:
    """Checks, manifests, validates and moves `staging` (a folder of IR) to `target`.
    `versions` default to those the exporter recorded in the IR; `extra` goes into the
    manifest as is. On failure `staging` stays where it is (the caller decides its fate)."""
    checks.check_ir_files(staging)
    checks.check_model_type(staging)
    if versions is None:
        versions = checks.exporter_versions(staging)
    renamed = check_interfaces(staging, versions.get("optimum-intel", ""))
    for item in renamed:
        say(f"Adapted {item.submodel}: {item.found} is also named {item.expected}.")
    weight_format = weight_format or checks.detect_weight_format(staging)
    if max_pixels:
        set_max_pixels(staging, max_pixels)
    manifest = build_manifest(
        staging,
        source=source,
        weight_format=weight_format,
        imported=imported,
        versions=versions,
        max_pixels=max_pixels,
    )
    manifest.extra.update(extra or {})
    write_manifest(staging, manifest)
    say("Validating: loading the model and generating a few tokens ...")
    summary = checks.validate_by_generating(staging)
    say(f"Validation passed ({summary}).")
    move_into_place(staging, target, force)
    return Installed(target, weight_format, summary, renamed)


def import_folder(
    source: Path,
    target: Path,
    *,
    force: bool = False,
    max_pixels: int | None = None,
    say: Say = print,
) -> Installed:
    """Copies an already converted OpenVINO folder into place as a checked model."""
    prepare_target(target, force, say)
    say(f"Checking {source} ...")
    checks.check_ir_files(source)
    checks.check_model_type(source)
    check_free_space(
        target.parent,
        folder_size(source) + (16 << 20),
        "the import",
        "Free some space or choose another models folder.",
    )
    versions = checks.exporter_versions(source)
    with staging_folder(target) as staging:
        say("Copying the model files ...")
        shutil.copytree(source, staging, dirs_exist_ok=True)
        (staging / MANIFEST_NAME).unlink(missing_ok=True)
        return finish_ir_folder(
            staging,
            target,
            source=str(source),
            imported=True,
            versions=versions,
            max_pixels=max_pixels,
            force=force,
            say=say,
        )
