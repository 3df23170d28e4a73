"""`desklens.json`: what a converted model folder holds and which software produced it.

Written after a successful export (convert.py), import or download (desktop.core.model_setup);
checked before the engine loads a folder, so that a missing or truncated file, or a runtime
older than the exporter, gets a clear sentence instead of a C++ stack trace.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path, PurePosixPath

from desktop.core import atomic, bounded_json

MANIFEST_NAME = "desklens.json"
MANIFEST_FORMAT = 1
SUPPORTED_MODEL_TYPES = ("qwen3_vl",)

# The IR files the engine drives; each .xml has a .bin beside it.
SUBMODELS = (
    "openvino_language_model",
    "openvino_text_embeddings_model",
    "openvino_vision_embeddings_model",
    "openvino_vision_embeddings_pos_model",
    "openvino_vision_embeddings_merger_model",
    "openvino_tokenizer",
    "openvino_detokenizer",
)
REQUIRED_FILES = (
    *(f"{name}.{ext}" for name in SUBMODELS for ext in ("xml", "bin")),
    "config.json",
    "preprocessor_config.json",
)
RUNTIME_PACKAGES = ("openvino", "openvino-tokenizers", "openvino-genai")
EXPORT_PACKAGES = ("optimum-intel", "nncf", "transformers", "torch")


class ModelError(Exception):
    """A model folder that cannot be used; str() is a user-facing sentence saying what to do."""


@dataclass
class FileEntry:
    size: int
    sha256: str


@dataclass
class Manifest:
    source: str
    model_type: str
    weight_format: str
    created: str
    versions: dict[str, str]
    files: dict[str, FileEntry]
    imported: bool = False
    max_pixels: int | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> str:
        data = {
            "format": MANIFEST_FORMAT,
            "source": self.source,
            "model_type": self.model_type,
            "weight_format": self.weight_format,
            "created": self.created,
            "imported": self.imported,
            "max_pixels": self.max_pixels,
            "versions": self.versions,
            "files": {k: {"size": v.size, "sha256": v.sha256} for k, v in self.files.items()},
            **({"extra": self.extra} if self.extra else {}),
        }
        return json.dumps(data, indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        return cls.from_dict(
            bounded_json.as_object(bounded_json.loads(text, what=MANIFEST_NAME), MANIFEST_NAME)
        )

    @classmethod
    def from_dict(cls, data: dict) -> Manifest:
        files = {
            _checked_name(k): FileEntry(int(v["size"]), v["sha256"])
            for k, v in data["files"].items()
        }
        return cls(
            source=data["source"],
            model_type=data["model_type"],
            weight_format=data["weight_format"],
            created=data["created"],
            versions=dict(data.get("versions", {})),
            files=files,
            imported=bool(data.get("imported", False)),
            max_pixels=data.get("max_pixels"),
            extra=dict(data.get("extra", {})),
        )


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def installed_versions(packages: tuple[str, ...]) -> dict[str, str]:
    versions = {}
    for package in packages:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions


def build_manifest(
    folder: Path,
    *,
    source: str,
    weight_format: str,
    imported: bool,
    versions: dict[str, str],
    max_pixels: int | None = None,
) -> Manifest:
    """Hashes every file in `folder`: the manifest itself and hidden top-level entries (a
    download's `.cache/` bookkeeping) excluded."""
    config = bounded_json.read_json(folder / "config.json")
    if not isinstance(config, dict):
        raise ModelError(f"{folder / 'config.json'} does not hold a model configuration.")
    files = {
        path.relative_to(folder).as_posix(): FileEntry(path.stat().st_size, sha256_file(path))
        for path in sorted(folder.rglob("*"))
        if path.is_file()
        and path.name != MANIFEST_NAME
        and not path.relative_to(folder).parts[0].startswith(".")
    }
    return Manifest(
        source=source,
        model_type=config.get("model_type", "unknown"),
        weight_format=weight_format,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        versions=versions,
        files=files,
        imported=imported,
        max_pixels=max_pixels,
    )


def write_manifest(folder: Path, manifest: Manifest) -> Path:
    return atomic.write_text(folder / MANIFEST_NAME, manifest.to_json())


def read_manifest(folder: Path) -> Manifest:
    path = folder / MANIFEST_NAME
    try:
        data = bounded_json.read_json(path)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        return Manifest.from_dict(data)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise ModelError(
            f"{folder} has no {MANIFEST_NAME}: DeskLens did not set it up. Download a model "
            f"with `desklens models --download`, or import a converted OpenVINO folder with "
            f"`desklens models --import {folder}`."
        ) from exc
    except OSError as exc:  # permission denied, an I/O error, a folder of that name
        raise ModelError(f"{path} could not be read: {exc.strerror or exc}.") from exc
    except bounded_json.JsonError as exc:
        raise ModelError(f"{exc} Convert or import the model again.") from exc
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelError(
            f"{path} is damaged ({exc}). Convert or import the model again with convert.py."
        ) from exc


def _checked_name(name: object) -> str:
    """A manifest's file name, refused unless it is a relative path inside the folder: a
    manifest must never make DeskLens read (or report the size of) a file elsewhere."""
    if not isinstance(name, str) or not name or "\\" in name or "\0" in name:
        raise ValueError(f"the file name {name!r} is not a plain relative path")
    parts = PurePosixPath(name).parts
    if PurePosixPath(name).is_absolute() or ".." in parts or (parts and ":" in parts[0]):
        raise ValueError(f"the file name {name!r} points outside the model folder")
    return name


def _inside(folder: Path, name: str) -> Path:
    """`folder / name`, refused if a symbolic link leads it out of the folder."""
    path = folder / name
    if not path.resolve().is_relative_to(folder.resolve()):
        raise ModelError(
            f"{name} in {folder} links outside the model folder; DeskLens does not follow it. "
            "Convert or import the model again."
        )
    return path


def _release(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def check_files(folder: Path) -> None:
    """Raises ModelError naming the first required file that is missing."""
    missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
    if missing:
        raise ModelError(
            f"The model folder {folder} is incomplete: {missing[0]} is missing. "
            "Convert or import the model again with convert.py."
        )


def verify_model_dir(folder: Path, *, hashes: bool = False) -> Manifest:
    """Checks a converted folder before loading: files, sizes (and sha256), versions, type."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelError(f"The model folder {folder} does not exist.")
    check_files(folder)
    manifest = read_manifest(folder)
    if manifest.model_type not in SUPPORTED_MODEL_TYPES:
        raise ModelError(
            f"{folder} holds a '{manifest.model_type}' model; DeskLens supports "
            f"{', '.join(SUPPORTED_MODEL_TYPES)}."
        )
    for name, entry in manifest.files.items():
        _check_entry(folder, name, entry, hashes)
    _check_versions(manifest)
    return manifest


def _check_entry(folder: Path, name: str, entry: FileEntry, hashes: bool) -> None:
    path = _inside(folder, name)
    if not path.is_file():
        raise ModelError(
            f"The model folder {folder} is incomplete: {name} is missing. "
            "Convert or import the model again with convert.py."
        )
    size = path.stat().st_size
    if size != entry.size:
        raise ModelError(
            f"{name} in {folder} is damaged: {size} bytes instead of {entry.size} "
            "(truncated copy or full disk?). Convert or import the model again."
        )
    if hashes and sha256_file(path) != entry.sha256:
        raise ModelError(
            f"{name} in {folder} does not match its checksum in {MANIFEST_NAME}. "
            "Convert or import the model again."
        )


def _check_versions(manifest: Manifest) -> None:
    runtime = installed_versions(RUNTIME_PACKAGES)
    for package in ("openvino", "openvino-tokenizers"):
        made_with, have = manifest.versions.get(package), runtime.get(package)
        if made_with and have and _release(have) < _release(made_with):
            raise ModelError(
                f"This model was exported with {package} {made_with}, newer than the installed "
                f"{have}. Update DeskLens (pip install -U {package}) or convert the model again "
                "with this version."
            )
