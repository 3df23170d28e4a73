"""Which OCR model files run: INT8 copies made by `quantize` when present, else the FP32 ONNX
models shipped in rapidocr's wheel. Nothing is ever downloaded.

INT8 runs ~1.8x faster on CPUs with VNNI and reads as well: on bench/ocr_bench.py's 28
screenshots, a median 0.70 s against 1.29 s per image, with a character error rate of 0.06%
against 0.05% (see bench/RESULTS.md).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from desktop.core import paths


class OcrModelError(RuntimeError):
    """The OCR models are missing or could not be loaded; str(e) is a user-facing sentence."""


def _package_dir(name: str) -> Path:
    """A package's folder, found without importing it (rapidocr's import takes 0.6 s)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise OcrModelError(f"The {name} package is not installed; reinstall DeskLens.")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


WHEEL_MODELS_DIR = _package_dir("rapidocr") / "models"
SOURCE_MODELS = {
    "det": "PP-OCRv6_det_small.onnx",
    "rec": "PP-OCRv6_rec_small.onnx",
    "cls": "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
}
QUANTIZED = ("det", "rec")  # the classifier is tiny and off by default
INT8_DIR_ENV = "DESKLENS_OCR_MODELS_DIR"
INT8_FOLDER = "ocr-int8"
MANIFEST_NAME = "desklens-ocr.json"

Precision = Literal["auto", "fp32", "int8"]


@dataclass(frozen=True)
class OcrModelFiles:
    det: Path
    rec: Path
    cls: Path
    precision: Literal["fp32", "int8"]


def compiled_cache_dir() -> Path:
    """Where OpenVINO keeps the compiled OCR models, so later starts skip compiling."""
    return paths.user_data_dir() / "cache" / "ocr"


def int8_dirs() -> list[Path]:
    """Where INT8 models may be, most specific first (DESKLENS_OCR_MODELS_DIR overrides):
    a development checkout's ov_models/, the installed bundle, the user data folder."""
    override = os.environ.get(INT8_DIR_ENV)
    if override:
        return [Path(override)]
    dirs = []
    dev = paths.source_tree_models_dir()
    if dev is not None:
        dirs.append(dev / INT8_FOLDER)
    bundle = getattr(sys, "_MEIPASS", None)  # set by PyInstaller in the installed app
    if bundle:
        dirs.append(Path(bundle) / INT8_FOLDER)
    dirs.append(paths.user_data_dir() / INT8_FOLDER)
    return dirs


def default_int8_dir() -> Path:
    return int8_dirs()[0]


def find_model_files(precision: Precision = "auto") -> OcrModelFiles:
    """The files to load. "auto" prefers valid INT8 models and falls back to FP32."""
    fp32 = {role: _wheel_model(role) for role in SOURCE_MODELS}
    if precision != "fp32":
        for folder in int8_dirs():
            quantized = _valid_int8(folder)
            if quantized is not None:
                return OcrModelFiles(**{**fp32, **quantized}, precision="int8")
        if precision == "int8":
            raise OcrModelError(
                "No INT8 OCR models were found; create them with "
                "`python -m desktop.core.ocr.quantize` (needs the `convert` extras)."
            )
    return OcrModelFiles(**fp32, precision="fp32")


def source_signature() -> dict[str, int]:
    """Sizes of the wheel's models: INT8 copies made from other versions are not used."""
    return {role: _wheel_model(role).stat().st_size for role in QUANTIZED}


def write_manifest(folder: Path, files: dict[str, str], versions: dict[str, str]) -> Path:
    manifest = folder / MANIFEST_NAME
    content = {"source_sizes": source_signature(), "files": files, "versions": versions}
    manifest.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    return manifest


def _valid_int8(folder: Path) -> dict[str, Path] | None:
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
        if manifest["source_sizes"] != source_signature():
            return None
        found = {role: folder / manifest["files"][role] for role in QUANTIZED}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    complete = all(xml.is_file() and xml.with_suffix(".bin").is_file() for xml in found.values())
    return found if complete else None


def _wheel_model(role: str) -> Path:
    path = WHEEL_MODELS_DIR / SOURCE_MODELS[role]
    if not path.is_file():
        raise OcrModelError(
            f"The OCR model {path.name} is missing from {WHEEL_MODELS_DIR}; reinstall DeskLens "
            "(the models come with the rapidocr package)."
        )
    return path
