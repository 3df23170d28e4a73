"""The engines the OCR benchmark compares: DeskLens's OcrEngine (INT8 and/or FP32) and the
Tesseract command-line tool, installed with apt-get when missing (with the benchmark's fonts).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from PIL import Image

from desktop.core.ocr import OcrEngine, OcrResult
from desktop.core.ocr.rendered_pages import FONT_FILES, font_path

TESSERACT = "Tesseract"
# Tesseract's languages for the styles: English, Chinese, and the accented European set.
TESSERACT_LANGS = {"eng", "chi_sim", "deu", "fra", "spa", "pol", "ces"}
APT_PACKAGES = ["tesseract-ocr"] + [
    f"tesseract-ocr-{lang.replace('_', '-')}" for lang in sorted(TESSERACT_LANGS)
]
APT_FONTS = ["fonts-dejavu", "fonts-liberation", "fonts-noto-cjk"]


def ensure_tools() -> str:
    """Install Tesseract (with its languages) and the fonts if missing; its version."""
    missing = [] if _tesseract_ready() else list(APT_PACKAGES)
    missing += [] if all(font_path(key) for key in FONT_FILES) else APT_FONTS
    if missing:
        print(f"Installing {' '.join(missing)} with apt-get...", file=sys.stderr)
        subprocess.run(["apt-get", "update"], check=True, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", *missing], check=True, capture_output=True)
    version = subprocess.run(["tesseract", "--version"], capture_output=True, text=True)
    return (version.stdout or version.stderr).splitlines()[0]


def _tesseract_ready() -> bool:
    if shutil.which("tesseract") is None:
        return False
    listed = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True)
    return set(listed.stdout.split()) >= TESSERACT_LANGS


def run_tesseract(path: Path, lang: str) -> tuple[str, float]:
    started = time.perf_counter()
    completed = subprocess.run(
        ["tesseract", str(path), "stdout", "-l", lang, "--psm", "3"],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        check=True,
    )
    return completed.stdout, time.perf_counter() - started


def run_desklens(engine: OcrEngine, image: Image.Image) -> tuple[OcrResult, float]:
    started = time.perf_counter()
    result = engine.extract(image)
    return result, time.perf_counter() - started


def make_engines(precision: str, threads: int | None) -> dict[str, OcrEngine]:
    """DeskLens engines by label: "both" compares the INT8 models with the FP32 ones."""
    wanted = ["int8", "fp32"] if precision == "both" else [precision]
    engines = {}
    for name in wanted:
        engine = OcrEngine(threads=threads, precision=name)  # type: ignore[arg-type]
        engine.warm_up()
        assert engine.model_files is not None
        engines[f"DeskLens {engine.model_files.precision.upper()}"] = engine
    return engines
