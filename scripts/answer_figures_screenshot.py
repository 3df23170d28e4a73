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
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / d) for d in ("", "tests/support", "bench", "scripts")]


def main(model_dir: Path, out: Path) -> int:
    from chat_features_screenshots import ask, settle
    from ocr_styles_documents import make_invoice

    from desktop.gui.app import create_app

    work = Path(tempfile.mkdtemp(prefix="desklens-shots-"))
    app, window = create_app(data_dir=work / "data", model_dir=model_dir)
    window.move(0, 0)
    window.resize(1100, 720)
    window.show()
    while not window.model_loaded:
        settle(200)
    window.apply_settings(replace(window.settings, max_new_tokens=16))
    invoice = make_invoice(random.Random(4), "invoice").image
    ask(window, "What is the total of this invoice?", [(invoice, "invoice.png")])
    settle(500)

    def shoot(name: str, width: int, height: int) -> None:
        settle()
        target = out / f"{name}.png"
        screen = window.screen()  # the X screen as drawn, window frame and all
        screen.grabWindow(0, 0, 0, width, height).save(str(target))
        print(f"wrote {target}")

    shoot("answer-figures", 1100, 720)
    window.apply_settings(replace(window.settings, theme="dark"))
    window.resize(800, 600)
    shoot("answer-figures-dark-800", 800, 600)
    window.close()
    app.quit()
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    target = Path(sys.argv[2]) if len(sys.argv) == 3 else ROOT / "docs" / "screenshots"
    raise SystemExit(main(Path(sys.argv[1]), target))
