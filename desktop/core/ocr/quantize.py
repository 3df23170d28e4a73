"""Build step: INT8 copies of the OCR detector and recognizer, calibrated on rendered text.

    python -m desktop.core.ocr.quantize [--out DIR]

Needs NNCF (the `convert` extras), so it runs when packaging or setting up a checkout, never in
the app. The calibration pages are rendered here from pseudo-words in the system's fonts and
several themes; nothing is downloaded. `model_files.find_model_files()` then picks the result.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import numpy as np
import openvino as ov
from PIL import Image, ImageDraw, ImageFont

from desktop.core.ocr.model_files import default_int8_dir, find_model_files, write_manifest
from desktop.core.ocr.ppocr import DetectorSettings, PpOcr, detector_input, recognizer_inputs
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
    fonts = _available_fonts()
    for _ in range(count):
        background, ink = rng.choice(THEMES)
        page = Image.new("RGB", (rng.randint(800, 1400), rng.randint(400, 900)), background)
        draw = ImageDraw.Draw(page)
        y = rng.randint(5, 30)
        while y < page.height - 40:
            size = rng.choice([10, 12, 13, 14, 16, 18, 22, 28, 36])
            font = _font(rng.choice(fonts), size)
            draw.text((rng.randint(5, 60), y), _pseudo_line(rng), font=font, fill=ink)
            y += int(size * rng.uniform(1.4, 2.5))
        yield np.ascontiguousarray(np.asarray(page)[:, :, ::-1])


def quantize(out_dir: Path, *, pages: int = 24, seed: int = 0) -> Path:
    """Write det_int8 / rec_int8 IR files and their manifest into out_dir; returns out_dir."""
    import nncf  # only installed with the `convert` extras

    fp32 = find_model_files("fp32")
    reader = PpOcr(fp32)
    settings = DetectorSettings()
    det_samples, rec_samples = [], []
    for bgr in calibration_pages(pages, seed):
        det_samples.append(detector_input(bgr, settings).tensor)
        crops = [crop_line(bgr, quad) for quad in reader.detect(bgr, settings)]
        rec_samples.extend(
            tensor[i : i + 1] for _, tensor in recognizer_inputs(crops) for i in range(len(tensor))
        )
    rec_samples = random.Random(seed).sample(rec_samples, min(MAX_REC_SAMPLES, len(rec_samples)))

    core = ov.Core()
    det = nncf.quantize(
        core.read_model(fp32.det),
        nncf.Dataset(det_samples),
        preset=nncf.QuantizationPreset.MIXED,
        subset_size=len(det_samples),
    )
    # The recognizer mixes convolutions with attention: quantizing it as a CNN lost ~20% of
    # characters in our trials; the transformer scheme keeps softmax/attention inputs precise.
    rec = nncf.quantize(
        core.read_model(fp32.rec),
        nncf.Dataset(rec_samples),
        preset=nncf.QuantizationPreset.MIXED,
        model_type=nncf.ModelType.TRANSFORMER,
        subset_size=len(rec_samples),
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    ov.save_model(det, out_dir / "det_int8.xml")
    ov.save_model(rec, out_dir / "rec_int8.xml")
    versions = {name: metadata.version(name) for name in ("openvino", "nncf", "rapidocr")}
    write_manifest(out_dir, {"det": "det_int8.xml", "rec": "rec_int8.xml"}, versions)
    return out_dir


def _available_fonts() -> list[str | None]:
    found: list[str | None] = []
    for name in FONT_NAMES:
        try:
            ImageFont.truetype(name, 12)
        except OSError:
            continue
        found.append(name)
    return found or [None]  # None: Pillow's built-in font


def _font(name: str | None, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size) if name is None else ImageFont.truetype(name, size)


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
    parser.add_argument("--out", type=Path, default=default_int8_dir(), help="output folder")
    parser.add_argument("--pages", type=int, default=24, help="calibration pages to render")
    args = parser.parse_args(argv)
    try:
        import nncf  # noqa: F401
    except ImportError:
        print("quantize needs NNCF: pip install -e '.[convert]'", file=sys.stderr)
        return 1
    print(f"INT8 OCR models written to {quantize(args.out, pages=args.pages)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
