"""Development step: calibrate the INT8 OCR models on rendered text (plain OpenVINO, no NNCF).

    python -m desktop.core.ocr.quantize [--out DIR] [--build-only]

Runs the FP32 detector and recognizer on pages rendered here from pseudo-words in the system's
fonts and several themes (nothing is downloaded) and writes the input range of every layer to
`int8_ranges.json`, which is committed; the app builds its INT8 models from it (`int8.py`).
Rerun it when rapidocr's models change. `--out` also builds the models into a folder.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import numpy as np
import openvino as ov

from desktop.core.ocr.int8 import RANGES_FILE, quantizable_inputs
from desktop.core.ocr.model_files import build_int8_models, find_model_files, source_signature
from desktop.core.ocr.ppocr import DetectorSettings, PpOcr, detector_input, recognizer_inputs
from desktop.core.ocr.rendered_pages import Page, available_fonts, named_font
from desktop.core.ocr.text_boxes import crop_line

FONT_NAMES = (  # Linux, Windows and macOS names; PIL searches the system font folders
    "DejaVuSans.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSansMono.ttf",
    "LiberationSans-Regular.ttf",
    "arial.ttf",
    "times.ttf",
    "consola.ttf",
    "Arial.ttf",
)
THEMES = (  # (background, ink)
    ((255, 255, 255), (20, 20, 20)),
    ((30, 30, 30), (220, 220, 220)),
    ((240, 240, 235), (90, 90, 90)),
    ((32, 48, 80), (250, 250, 250)),
)
MAX_REC_SAMPLES = 300


def calibration_pages(count: int, seed: int = 0) -> Iterator[np.ndarray]:
    """BGR pages of pseudo-text in varied fonts, sizes and themes."""
    rng = random.Random(seed)
    fonts = available_fonts(FONT_NAMES)
    for _ in range(count):
        background, ink = rng.choice(THEMES)
        page = Page(rng.randint(800, 1400), rng.randint(400, 900), background, ink)
        y = rng.randint(5, 30)
        while y < page.height - 40:
            size = rng.choice([10, 12, 13, 14, 16, 18, 22, 28, 36])
            face = named_font(rng.choice(fonts), size)
            page.text(rng.randint(5, 60), y, _pseudo_line(rng), face)
            y += int(size * rng.uniform(1.4, 2.5))
        yield np.ascontiguousarray(np.asarray(page.image)[:, :, ::-1])


def calibration_samples(pages: int, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Detector inputs of rendered pages, and recognizer inputs of the lines found on them."""
    reader = PpOcr(find_model_files("fp32"))
    settings = DetectorSettings()
    det_samples: list[np.ndarray] = []
    rec_samples: list[np.ndarray] = []
    for bgr in calibration_pages(pages, seed):
        det_samples.append(detector_input(bgr, settings).tensor)
        crops = [crop_line(bgr, quad) for quad in reader.detect(bgr, settings)]
        rec_samples.extend(
            tensor[i : i + 1] for _, tensor in recognizer_inputs(crops) for i in range(len(tensor))
        )
    rec_samples = random.Random(seed).sample(rec_samples, min(MAX_REC_SAMPLES, len(rec_samples)))
    return det_samples, rec_samples


def activation_ranges(path: Path, samples: list[np.ndarray]) -> dict[str, list[float]]:
    """[low, high] of every quantisable layer's input: the mean over samples of their min and
    max (robust to a single outlier page, unlike the absolute extremes)."""
    core = ov.Core()
    model = core.read_model(path)
    inputs: dict[str, ov.Output] = {}
    for node, key in quantizable_inputs(model):
        inputs.setdefault(key, node.input_value(0))
    first_added = len(model.outputs)
    model.add_outputs(list(inputs.values()))
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    lows: dict[str, list[float]] = {key: [] for key in inputs}
    highs: dict[str, list[float]] = {key: [] for key in inputs}
    for sample in samples:
        results = compiled(sample)
        for index, key in enumerate(inputs):
            values = results[compiled.outputs[first_added + index]]
            lows[key].append(float(values.min()))
            highs[key].append(float(values.max()))
    return {key: [float(np.mean(lows[key])), float(np.mean(highs[key]))] for key in inputs}


def calibrate(pages: int = 24, seed: int = 0) -> dict:
    """The content of int8_ranges.json for the installed rapidocr models."""
    det_samples, rec_samples = calibration_samples(pages, seed)
    fp32 = find_model_files("fp32")
    return {
        "source_sizes": source_signature(),
        "made_with": {name: metadata.version(name) for name in ("openvino", "rapidocr")},
        "samples": {"det": len(det_samples), "rec": len(rec_samples)},
        "det": activation_ranges(fp32.det, det_samples),
        "rec": activation_ranges(fp32.rec, rec_samples),
    }


def _pseudo_line(rng: random.Random) -> str:
    """Nonsense words, numbers and punctuation; a quarter of the lines look like code."""
    words = []
    for _ in range(rng.randint(2, 12)):
        kind = rng.random()
        if kind < 0.15:
            words.append(str(rng.randint(0, 99999)))
        else:
            word = _pseudo_word(rng)
            words.append(word.capitalize() if kind > 0.8 else word)
    if rng.random() < 0.25:
        name, call = _pseudo_word(rng), _pseudo_word(rng)
        symbol = rng.choice(["=", "+=", "==", ">=", "->", ":"])
        indent = "    " * rng.randint(0, 3)
        return f'{indent}{name} {symbol} {call}({words[0]}, "{words[-1]}")  # {name}'
    return " ".join(words) + rng.choice(["", ".", ",", ":", "?", ";"])


def _pseudo_word(rng: random.Random) -> str:
    letters = "etaoinshrdlucmfwypvbgkqjxz"
    return "".join(rng.choice(letters[: rng.randint(8, 26)]) for _ in range(rng.randint(1, 10)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ranges", type=Path, default=RANGES_FILE, help="calibration ranges file (JSON)"
    )
    parser.add_argument("--pages", type=int, default=24, help="calibration pages to render")
    parser.add_argument(
        "--out", type=Path, help="also build the INT8 models into this folder (e.g. to bundle)"
    )
    parser.add_argument(
        "--build-only", action="store_true", help="skip calibration: build --out from --ranges"
    )
    args = parser.parse_args(argv)
    if not args.build_only:
        ranges = calibrate(args.pages)
        args.ranges.write_text(json.dumps(ranges, indent=1) + "\n", encoding="utf-8")
        print(f"calibration ranges written to {args.ranges}")
    if args.out:
        if build_int8_models(args.out, args.ranges) is None:
            print(f"could not build INT8 models into {args.out}", file=sys.stderr)
            return 1
        print(f"INT8 OCR models written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
