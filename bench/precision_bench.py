#!/usr/bin/env python3
"""The engine's precisions on this CPU: the fixed defaults (vision encoder f32, language model
at the device default) against those measured at first load (`engine/tuning.py`), side by side
in one process, alternating, on windows and dialogs the tuning never saw.

    python bench/precision_bench.py --write          # Qwen3-VL-2B shape, random weights
    python bench/precision_bench.py --images A.png B.png   # your own screenshots as well
    python bench/precision_bench.py --smoke --smoke-model DIR --smoke-checkpoint DIR

The windows are Qt's own dialogs (a file dialog on /usr/share, the colour and font dialogs)
rendered offscreen at 1049 x 721; the tuning reads noise images. The choice is measured afresh
in this run (a temporary choices file), and its time is printed. Each window is asked twice per
configuration: cold (vision, prefill, first token, decode) and as the app usually asks, with the
picture read ahead while the question is typed (the first token after Send).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import smoke  # noqa: E402  (bench/ is on sys.path)
import vlm_bench  # noqa: E402
from results import publish  # noqa: E402

HEADING = "## Engine precisions chosen per CPU (issue 60)"
WINDOW = (1049, 721)
NEW_TOKENS = 64
ROUNDS = 2
QUESTION = "What does this window show?"


def qt_windows(size: tuple[int, int]) -> dict:
    """Qt's file, colour and font dialogs as PIL images (offscreen, never shown)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PIL import Image
    from PySide6.QtWidgets import QApplication, QColorDialog, QFileDialog, QFontDialog

    app = QApplication.instance() or QApplication([])
    files = QFileDialog(None, "Open", "/usr/share")
    files.setOption(QFileDialog.Option.DontUseNativeDialog)
    colours = QColorDialog()
    colours.setOption(QColorDialog.ColorDialogOption.DontUseNativeDialog)
    fonts = QFontDialog()
    fonts.setOption(QFontDialog.FontDialogOption.DontUseNativeDialog)
    images = {}
    for name, dialog in (
        ("file dialog", files),
        ("colour dialog", colours),
        ("font dialog", fonts),
    ):
        dialog.resize(*size)
        dialog.show()
        for _ in range(20):  # the file dialog lists its folder on a thread of its own
            app.processEvents()
            time.sleep(0.05)
        grabbed = dialog.grab().toImage()
        width, height = grabbed.width(), grabbed.height()
        data = bytes(grabbed.constBits())[: width * height * 4]
        images[name] = Image.frombuffer("RGBA", (width, height), data, "raw", "BGRA", 0, 1)
        dialog.hide()
    return {name: image.convert("RGB") for name, image in images.items()}


def read_ahead_first_token(engine, image, settings) -> float:
    """The app's usual Send: the picture was read while the question was typed
    (`VLMEngine.prepare`), so the first token waits only for the question's prefill."""
    from desktop.core.chat import Conversation

    engine.reset()
    conversation = Conversation()
    ready = engine.prepare(conversation, [image], settings)
    assert ready.status == "ready", ready
    return engine.ask(conversation, QUESTION, [image], settings).stats.ttft_s


def main() -> int:
    parser = smoke.model_bench_parser(__doc__)
    parser.add_argument("--images", nargs="*", type=Path, default=[], help="more screenshots")
    args = parser.parse_args()
    smoke.check_smoke(args)
    _, ir = smoke.models(args, parser, vlm_bench.prepare_models)
    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import EngineConfig, VLMEngine, tuning
    from desktop.core.images import load_image

    size = (320, 220) if args.smoke else WINDOW
    images = {name: load_image(image, name=name) for name, image in qt_windows(size).items()}
    images.update({path.name: load_image(path) for path in args.images})
    with tempfile.TemporaryDirectory() as folder:
        os.environ[tuning.CHOICES_ENV] = str(Path(folder) / "choices.json")
        started = time.perf_counter()
        tuned = VLMEngine.load(ir, EngineConfig())
        tuned_load = time.perf_counter() - started
        del os.environ[tuning.CHOICES_ENV]
    defaults = VLMEngine.load(ir, EngineConfig(tune_precision=False))
    choice = tuned.precision_choice
    engines = {"defaults (vision f32, LM device default)": defaults, "chosen": tuned}
    tokens, rounds = (4, 1) if args.smoke else (NEW_TOKENS, ROUNDS)
    settings = GenerationSettings(max_new_tokens=tokens, ignore_eos=True)
    figures: dict[tuple[str, str], list] = {}
    for _ in range(rounds):
        for name, image in images.items():
            for label, engine in engines.items():
                engine.reset()
                started = time.perf_counter()
                stats = engine.ask(Conversation(), QUESTION, [image], settings).stats
                whole = time.perf_counter() - started  # end to end, as the user waits
                row = (stats.visual_tokens, stats.vision_s, stats.prefill_s, stats.ttft_s)
                after_send = read_ahead_first_token(engine, image, settings)
                figures.setdefault((name, label), []).append(
                    (*row, after_send, stats.tokens_per_s, whole)
                )
    shown = (" --images " + " ".join(map(str, args.images))) if args.images else ""
    model = "tiny test model" if args.smoke else "Qwen3-VL-2B shape, random weights, INT8"
    said = choice.sentence() if choice else "-"
    lines = [
        HEADING,
        "",
        f"Command: `python bench/precision_bench.py{' --smoke' if args.smoke else ''}{shown}` "
        f"({model}; {tokens} new tokens; medians of {rounds} rounds, the two configurations "
        "alternating in one process).",
        "",
        f"Chosen: **{said}**; first load with the measurement {tuned_load:.1f} s.",
        "",
        "| window | configuration | visual tokens | vision | prefill | first token "
        f"| first token after Send, read ahead | decode | whole answer ({tokens} tokens) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in images:
        medians = {}
        for label in engines:
            rows = figures[(name, label)]
            med = [statistics.median(column) for column in zip(*rows, strict=True)]
            medians[label] = med
            lines.append(
                f"| {name} | {label} | {med[0]:.0f} | {med[1]:.2f} s | {med[2]:.2f} s | "
                f"{med[3]:.2f} s | {med[4]:.2f} s | {med[5]:.1f} tok/s | {med[6]:.2f} s |"
            )
        base, new = medians.values()
        ratios = [new[i] / base[i] for i in range(1, 7)]
        lines.append(
            f"| {name} | **chosen / defaults** | | {ratios[0]:.2f}x | {ratios[1]:.2f}x"
            f" | **{ratios[2]:.2f}x** | **{ratios[3]:.2f}x** | **{ratios[4]:.2f}x**"
            f" | **{ratios[5]:.2f}x** |"
        )
    publish(HEADING, "\n".join(lines) + "\n", args.write and not args.smoke)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
