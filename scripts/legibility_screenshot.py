#!/usr/bin/env python3
"""The readability guard's warning, for docs/GUI.md (issue 40): a 1920x1080 statement with
12 px text attached at the lowest image detail (256 visual tokens), where the fast OCR predicts
lines of about 6 px after the model's resize.

    Xvfb :9 -screen 0 1400x900x24 &
    DISPLAY=:9 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/legibility_screenshot.py MODEL_DIR [OUT]

MODEL_DIR is a converted model (the tests' tiny INT8 one will do: nothing is asked). OUT
(default docs/screenshots) gets legibility-warning.png.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / d) for d in ("", "tests/support", "bench", "scripts")]

LINES = [
    f"{day:02d}.11.2026  Card payment  ACME WIDGETS GMBH  ref {4400 + day}  -{day * 37},{day:02d}"
    for day in range(1, 31)
]


def main(model_dir: Path, out: Path) -> int:
    from chat_features_screenshots import grab, open_window, settle

    from desktop.core.images import load_image
    from desktop.core.ocr.rendered_pages import render_lines
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.settings import AppSettings, SettingsStore

    def lowest_detail(data: Path) -> None:
        SettingsStore(data).save(AppSettings(max_visual_tokens=256, prepare_ahead=False))

    app, window = open_window(model_dir, before=lowest_detail)
    page = render_lines(LINES, size=12, width=1920, height=1080)
    window.composer.add_images([ImageRef.of(load_image(page, name="statement.png"))])
    window.composer.editor.setPlainText("What did I pay ACME on the 17th?")
    bar = window.page.legibility_bar
    while window.legibility.pending:
        settle(200)
    if not bar.text():
        raise SystemExit("no warning: the text was read as readable")
    print("warning:", bar.text())
    settle(500)
    grab(window, out / "legibility-warning.png")
    window.close()
    app.quit()
    return 0


if __name__ == "__main__":
    from chat_features_screenshots import run_script

    run_script(main, __doc__ or "")
