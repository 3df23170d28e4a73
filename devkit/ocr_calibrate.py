"""Development step: quantize the OCR models with NNCF on pages of every benchmark style.

    .venv/bin/python -m devkit.ocr_calibrate                # decisions -> int8_ranges.json
    .venv/bin/python -m devkit.ocr_calibrate --models DIR   # also the NNCF IR, to compare

Calibration pages are rendered here (nothing is downloaded) from every style of the OCR
benchmark (bench/ocr_bench.py STYLES) at seeds from 1000 up, which neither the benchmark (seed
7) nor its held-out row (2026) uses, plus the pseudo-text pages of earlier calibrations. NNCF
(the convert extra) decides where the FakeQuantize layers go and their ranges;
`desktop.core.ocr.int8.decisions_of` writes that down as JSON, and the app rebuilds the same
graph from it with plain OpenVINO at first run (NNCF stays out of the runtime).

Weights are quantized to 7 bits inside an 8-bit range (NNCF's overflow fix on every weighted
layer but the depthwise convolutions, whose kernels multiply in 32 bits): CPUs without VNNI
multiply u8 activations by s8 weights into 16-bit sums that saturate for the largest products,
CPUs with VNNI do not, so 8-bit weights read differently by CPU; with 7-bit weights no pair sum
can overflow and every CPU computes the same integers. See docs/ARCHITECTURE.md, "INT8 OCR on
every CPU".
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from desktop.core.ocr import int8  # noqa: E402
from desktop.core.ocr.detection_scale import DetectorSettings  # noqa: E402
from desktop.core.ocr.model_files import find_model_files, source_signature  # noqa: E402
from desktop.core.ocr.model_inputs import detector_input, recognizer_inputs  # noqa: E402
from desktop.core.ocr.ppocr import PpOcr  # noqa: E402
from desktop.core.ocr.rendered_pages import Page, available_fonts, named_font  # noqa: E402
from desktop.core.ocr.text_boxes import crop_line  # noqa: E402

CALIBRATION_SEED = 1000
# The detector's head (the last convolution and the two transposed convolutions that draw the
# full-size text map) stays FP32: quantized, its map shrank boxes by a pixel or two, and the
# angle classifier then took a tight crop of an upside-down line for an upright one.
DET_FP32_LAYERS = ["Conv.82", "ConvTranspose.0", "ConvTranspose.2"]
# The recognizer's sequence half (the two SVTR transformer blocks and the 1x1 convolution
# after them) stays FP32: quantized, it dropped spaces ("99Wh") and read a lone "-" as "." —
# the characters decided last. It costs little; the convolutional backbone that reads the
# pixels is INT8, and so is the CTC head (MatMul.12, 120 features to 18,710 characters at
# every step: a quarter of the recognizer's time in FP32, half that in INT8; added with
# --add-only, bench/RESULTS.md "OCR speed against Tesseract").
REC_FP32_LAYERS = [f"MatMul.{n}" for n in range(12)] + ["Conv.54"]
MAX_REC_SAMPLES = 600
# Quantized with its GELUs folded into single layers (int8.prepared): the detector's GELUs
# otherwise ran as separate INT8 element-wise layers. The recognizer's fold on their own
# when it is compiled, and fusing it would merge the attention MatMuls named above.
FUSED_ROLES = ("det",)

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


def style_pages(per_style: int, seed: int = CALIBRATION_SEED) -> list[np.ndarray]:
    """BGR pages of every benchmark style, from seeds the benchmark never reads."""
    from bench.ocr_bench import STYLES

    rng = random.Random(seed)
    pages = []
    for maker in STYLES:
        for index in range(per_style):
            image = maker(rng, f"calibration-{index}").image.convert("RGB")
            pages.append(np.ascontiguousarray(np.asarray(image)[:, :, ::-1]))
    return pages


def samples(pages: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    reader = PpOcr(find_model_files("fp32"))
    settings = DetectorSettings()
    det, rec = [], []
    for bgr in pages:
        det.append(detector_input(bgr, settings).tensor)
        crops = [crop_line(bgr, quad) for quad in reader.detect(bgr, settings)]
        rec.extend(t[i : i + 1] for _, t in recognizer_inputs(crops) for i in range(len(t)))
    rec = random.Random(CALIBRATION_SEED).sample(rec, min(MAX_REC_SAMPLES, len(rec)))
    return det, rec


def quantize(
    path: Path,
    data: list[np.ndarray],
    transformer: bool,
    fp32_layers: list[str] | None = None,
    *,
    fused: bool = False,
) -> ov.Model:
    import nncf
    from nncf.quantization.advanced_parameters import (
        AdvancedQuantizationParameters,
        AdvancedSmoothQuantParameters,
        OverflowFix,
    )
    from nncf.quantization.range_estimator import RangeEstimatorParametersSet

    model = int8.prepared(path, fused)
    advanced = AdvancedQuantizationParameters(
        overflow_fix=OverflowFix.ENABLE,  # 7-bit weights: the same integers on every CPU
        # An activation's range: the mean over the pages of their min and max, as the earlier
        # hand-made calibration did (NNCF's default, the extremes over all pages, left too few
        # levels for faint and small glyphs: a lone "-" read as ".").
        activations_range_estimator_params=RangeEstimatorParametersSet.MEAN_MINMAX,
        disable_bias_correction=True,  # the decisions are FakeQuantize layers only
        smooth_quant_alphas=AdvancedSmoothQuantParameters(convolution=-1, matmul=-1),
        # Weights keep their FakeQuantize layers (decisions_of records them); the app's build
        # folds them into int8 constants as NNCF would.
        backend_params={"compress_weights": False},
    )
    return nncf.quantize(
        model,
        nncf.Dataset(data),
        model_type=nncf.ModelType.TRANSFORMER if transformer else None,
        ignored_scope=nncf.IgnoredScope(names=fp32_layers or []),
        subset_size=len(data),
        advanced_parameters=advanced,
    )


def _added(committed: list[dict], made: list[dict]) -> list[dict]:
    """`committed` and those of `made` on layer inputs no committed decision feeds. Keyed by
    the consumers, not the producers: OpenVINO numbers the Reshapes in front of the
    depthwise weights afresh on every read."""
    fed = {tuple(consumer) for decision in committed for consumer in decision["consumers"]}
    return committed + [
        decision
        for decision in made
        if not any(tuple(consumer) in fed for consumer in decision["consumers"])
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-style", type=int, default=3, help="calibration pages per style")
    parser.add_argument("--pseudo-pages", type=int, default=12, help="pseudo-text pages too")
    parser.add_argument("--ranges", type=Path, default=int8.RANGES_FILE, help="output JSON")
    parser.add_argument("--models", type=Path, help="also save NNCF's own IR here")
    parser.add_argument(
        "--only", choices=["det", "rec"], help="decide one model again, keep the other's"
    )
    parser.add_argument(
        "--add-only",
        action="store_true",
        help="keep every committed decision; add the new run's on layer inputs that had none"
        " (a layer taken off the FP32 lists, without moving the ranges of the others)",
    )
    args = parser.parse_args(argv)
    pages = style_pages(args.per_style) + list(calibration_pages(args.pseudo_pages, seed=0))
    det, rec = samples(pages)
    fp32 = find_model_files("fp32")
    decided = int8.load_ranges(args.ranges) if args.only or args.add_only else {}
    decided.update(
        source_sizes=source_signature(),
        made_with={n: metadata.version(n) for n in ("openvino", "rapidocr", "nncf")},
    )
    decided.setdefault("samples", {})
    fused_roles = set(decided.get("fused", []))
    for role, data, transformer, fp32_layers in (
        ("det", det, False, DET_FP32_LAYERS),
        ("rec", rec, True, REC_FP32_LAYERS),
    ):
        if args.only and role != args.only:
            continue
        fused = role in FUSED_ROLES
        quantized = quantize(getattr(fp32, role), data, transformer, fp32_layers, fused=fused)
        fused_roles = fused_roles | {role} if fused else fused_roles - {role}
        decided["fused"] = sorted(fused_roles)
        decided["samples"][role] = len(data)
        made = int8.decisions_of(quantized)
        decided[role] = _added(decided[role], made) if args.add_only else made
        if args.models:
            args.models.mkdir(parents=True, exist_ok=True)
            ov.save_model(quantized, args.models / f"{role}_nncf.xml", compress_to_fp16=False)
    args.ranges.write_text(json.dumps(decided, indent=1) + "\n", encoding="utf-8")
    print(f"INT8 decisions written to {args.ranges}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
