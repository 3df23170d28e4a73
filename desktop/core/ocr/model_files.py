"""Which OCR model files run: INT8 copies of rapidocr's models, else its FP32 ONNX models.
Nothing is ever downloaded.

INT8 copies are built from the wheel's models and the committed INT8 decisions (NNCF's
FakeQuantize layers, `int8.py`) the first time OCR runs, into the user data folder, in well
under a second; a bundle may ship them ready-made. A copy records the sha256 of the decisions
it was built from, so new decisions (an update of DeskLens) rebuild it. They are the default
(`DESKLENS_OCR_PRECISION=fp32` asks for the FP32 models): they read every page of the OCR
tests as FP32 does, within 0.003 CER of it on every benchmark style at every instruction-set
level, about twice as fast with VNNI (bench/RESULTS.md). A line where the INT8 recognizer is
torn between "0" and "O" with no word to settle it is read again by the FP32 recognizer
(`PpOcr._read_again`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from desktop.core import atomic, paths
from desktop.core.bounded_json import read_json_object

log = logging.getLogger(__name__)


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
CACHE_DIR_ENV = "DESKLENS_OCR_CACHE_DIR"
PRECISION_ENV = "DESKLENS_OCR_PRECISION"  # "fp32": the FP32 models when precision is "auto"
INT8_FOLDER = "ocr-int8"
MANIFEST_NAME = "desklens-ocr.json"

Precision = Literal["auto", "fp32", "int8"]


@dataclass(frozen=True)
class OcrModelFiles:
    det: Path
    rec: Path
    cls: Path
    precision: Literal["fp32", "int8", "mixed"]  # mixed: one part INT8 (`int8_check.py`)
    # INT8 models: the FP32 recognizer that reads again a line with a look-alike in doubt
    rec_reference: Path | None = None


def compiled_cache_dir() -> Path:
    """Where OpenVINO keeps the compiled OCR models, so later starts skip compiling (~2 s):
    $DESKLENS_OCR_CACHE_DIR (the test suite shares one among its many data folders), else the
    user data folder's cache/ocr."""
    override = os.environ.get(CACHE_DIR_ENV)
    return Path(override) if override else paths.user_data_dir() / "cache" / "ocr"


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


def find_model_files(precision: Precision = "auto") -> OcrModelFiles:
    """The files to load. "auto" is INT8 unless DESKLENS_OCR_PRECISION=fp32 asks for FP32,
    and FP32 when the INT8 copies cannot be built (an unwritable data folder, decisions made
    for other source models); "int8" raises OcrModelError then."""
    fp32 = {role: _wheel_model(role) for role in SOURCE_MODELS}
    opted_out = os.environ.get(PRECISION_ENV, "").strip().lower() == "fp32"
    if precision == "int8" or (precision == "auto" and not opted_out):
        quantized = next(filter(None, map(_current_int8, int8_dirs())), None)
        if quantized is None:
            quantized = build_int8_models(int8_dirs()[-1])
        if quantized is not None:
            files = {**fp32, **quantized}
            return OcrModelFiles(**files, precision="int8", rec_reference=fp32["rec"])
        if precision == "int8":
            raise OcrModelError(
                f"INT8 OCR models could not be built in {int8_dirs()[-1]} (is it writable?); "
                "FP32 models are used otherwise."
            )
        log.warning("INT8 OCR models could not be built in %s: FP32 models", int8_dirs()[-1])
    return OcrModelFiles(**fp32, precision="fp32")


def build_int8_models(target: Path, ranges_file: Path | None = None) -> dict[str, Path] | None:
    """INT8 det/rec built into `target` from the wheel's models and the calibration ranges
    (the committed ones by default), staged in a hidden folder and renamed into place; None
    when the ranges were calibrated on other source models (a rapidocr upgrade) or the folder
    cannot be written (read-only profile, full disk): FP32 is used then."""
    from desktop.core.ocr import int8  # OpenVINO's graph API: only when building

    ranges_file = ranges_file or int8.RANGES_FILE
    staging = target.with_name(f".{target.name}-{os.getpid()}")
    try:
        ranges = int8.load_ranges(ranges_file)
        if ranges.get("source_sizes") != source_signature():
            return None
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        files = {}
        for role in QUANTIZED:
            files[role] = f"{role}_int8.xml"
            fused = role in ranges.get("fused", [])
            int8.build_int8(_wheel_model(role), ranges[role], staging / files[role], fused=fused)
        versions = {"openvino": int8.ov.__version__, "ranges": ranges_file.name}
        write_manifest(staging, files, versions, decisions_digest(ranges_file))
        if target.exists():
            finished = _current_int8(target, ranges_file)
            if finished is not None:  # another process (the CLI, a second window) was first
                shutil.rmtree(staging, ignore_errors=True)  # and may be loading its files
                return finished
            shutil.rmtree(target, ignore_errors=True)  # a stale or broken copy
        staging.rename(target)
    except (OSError, RuntimeError, ValueError, KeyError, TypeError):
        shutil.rmtree(staging, ignore_errors=True)
        return None
    return _current_int8(target, ranges_file)


def decisions_digest(ranges_file: Path | None = None) -> str:
    """sha256 of the INT8 decisions file (the committed one by default)."""
    if ranges_file is None:
        ranges_file = Path(__file__).with_name("int8_ranges.json")
    return hashlib.sha256(ranges_file.read_bytes()).hexdigest()


def source_signature() -> dict[str, int]:
    """Sizes of the wheel's models: INT8 copies made from other versions are not used."""
    return {role: _wheel_model(role).stat().st_size for role in QUANTIZED}


def write_manifest(
    folder: Path, files: dict[str, str], versions: dict[str, str], decisions: str
) -> Path:
    content = {
        "source_sizes": source_signature(),
        "decisions_sha256": decisions,
        "files": files,
        "versions": versions,
    }
    return atomic.write_text(folder / MANIFEST_NAME, json.dumps(content, indent=2) + "\n")


def _current_int8(folder: Path, ranges_file: Path | None = None) -> dict[str, Path] | None:
    """The INT8 files in `folder` if they were built from these source models and these
    decisions (a copy from older decisions is stale), else None."""
    try:
        manifest = read_json_object(folder / MANIFEST_NAME)
        if manifest["source_sizes"] != source_signature():
            return None
        if manifest.get("decisions_sha256") != decisions_digest(ranges_file):
            return None
        found = {role: folder / _plain_name(manifest["files"][role]) for role in QUANTIZED}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    complete = all(xml.is_file() and xml.with_suffix(".bin").is_file() for xml in found.values())
    return found if complete else None


def _plain_name(name: object) -> str:
    """A file name inside the folder: a manifest cannot point the OCR at another file."""
    if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(f"not a file name inside the folder: {name!r}")
    return name


def _wheel_model(role: str) -> Path:
    path = WHEEL_MODELS_DIR / SOURCE_MODELS[role]
    if not path.is_file():
        raise OcrModelError(
            f"The OCR model {path.name} is missing from {WHEEL_MODELS_DIR}; reinstall DeskLens "
            "(the models come with the rapidocr package)."
        )
    return path
