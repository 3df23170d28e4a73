#!/usr/bin/env python3
"""Asking about a region, for docs/GUI.md (issue 40): boxes dragged with xdotool on an
attached invoice in "Ask about a region…", then the question's bubble with its boxes.

    Xvfb :9 -screen 0 1400x900x24 &
    DISPLAY=:9 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/region_screenshots.py MODEL_DIR [OUT]

MODEL_DIR is a converted model (the tests' tiny INT8 one: its answer is gibberish, so it is
kept to a few tokens). OUT (default docs/screenshots) gets region-picker.png and
region-question.png. The drags are real X pointer events (xdotool), not calls into the widget.
"""

from __future__ import annotations

import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / d) for d in ("", "tests/support", "bench", "scripts")]

# Two boxes, as shares of the canvas (the invoice is shown scaled to fit the dialog).
DRAGS = [((0.60, 0.585), (0.80, 0.645)), ((0.60, 0.24), (0.78, 0.32))]  # total; number, date


def xdrag(start: tuple[int, int], end: tuple[int, int]) -> None:
    """A left-button drag on the X screen, in steps, as a hand would."""
    (x1, y1), (x2, y2) = start, end
    steps = [f"{x1 + (x2 - x1) * i // 8} {y1 + (y2 - y1) * i // 8}" for i in range(1, 9)]
    command = f"mousemove {x1} {y1} mousedown 1 " + " ".join(f"mousemove {s}" for s in steps)
    subprocess.run(["xdotool", *command.split(), "mouseup", "1"], check=True)


def main(model_dir: Path, out: Path) -> int:
    from chat_features_screenshots import ask, grab, open_window, settle
    from ocr_styles_documents import make_invoice
    from PySide6.QtCore import QPoint

    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    app, window = open_window(model_dir)
    window.apply_settings(replace(window.settings, max_new_tokens=16))
    invoice = make_invoice(random.Random(4), "invoice").image
    ref = ImageRef.of(load_image(invoice, name="invoice.png"))
    window.composer.add_images([ref])
    dialog = window.composer.pick_regions(ref)
    dialog.move(40, 30)
    settle(800)
    canvas = dialog.canvas
    for (sx, sy), (ex, ey) in DRAGS:
        start = canvas.mapToGlobal(QPoint(round(sx * canvas.width()), round(sy * canvas.height())))
        end = canvas.mapToGlobal(QPoint(round(ex * canvas.width()), round(ey * canvas.height())))
        xdrag((start.x(), start.y()), (end.x(), end.y()))
        settle(300)
    print("boxes drawn:", [box.label() for box in canvas.boxes])
    if len(canvas.boxes) != len(DRAGS):
        raise SystemExit("the xdotool drags did not reach the canvas")
    settle()
    frame = dialog.frameGeometry()
    picker = out / "region-picker.png"
    window.screen().grabWindow(0, frame.x(), frame.y(), frame.width(), frame.height()).save(
        str(picker)
    )
    print(f"wrote {picker}")
    dialog.accept()
    ask(window, "What do the marked regions say?")
    settle(500)
    grab(window, out / "region-question.png")
    window.close()
    app.quit()
    return 0


if __name__ == "__main__":
    from chat_features_screenshots import run_script

    run_script(main, __doc__ or "")
