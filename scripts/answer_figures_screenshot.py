#!/usr/bin/env python3
"""The answer card's figures (how much of the image was read, the timings) for docs/GUI.md,
and a look at the window at 800x600 in the dark theme (issue 39).

    Xvfb :9 -screen 0 1400x900x24 &
    DISPLAY=:9 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/answer_figures_screenshot.py \
        MODEL_DIR [OUT]

MODEL_DIR is a converted model (the tests' tiny INT8 one: its answer is gibberish, so it is
kept to a few tokens; the card's figures line is the real one). OUT (default docs/screenshots)
gets answer-figures.png; a second, dark 800x600 look goes to OUT/answer-figures-dark-800.png.
"""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / d) for d in ("", "tests/support", "bench", "scripts")]


def main(model_dir: Path, out: Path) -> int:
    from chat_features_screenshots import ask, grab, open_window, settle
    from ocr_styles_documents import make_invoice

    app, window = open_window(model_dir)
    window.apply_settings(replace(window.settings, max_new_tokens=16))
    invoice = make_invoice(random.Random(4), "invoice").image
    ask(window, "What is the total of this invoice?", [(invoice, "invoice.png")])
    settle(500)

    grab(window, out / "answer-figures.png")
    window.apply_settings(replace(window.settings, theme="dark"))
    window.resize(800, 600)
    grab(window, out / "answer-figures-dark-800.png", 800, 600)
    window.close()
    app.quit()
    return 0


if __name__ == "__main__":
    from chat_features_screenshots import run_script

    run_script(main, __doc__ or "")
