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
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / d) for d in ("", "tests/support", "bench", "scripts")]

LINES = [
    f"{day:02d}.11.2026  Card payment  ACME WIDGETS GMBH  ref {4400 + day}  -{day * 37},{day:02d}"
    for day in range(1, 31)
]


def main(model_dir: Path, out: Path) -> int:
    from chat_features_screenshots import settle

    from desktop.core.images import load_image
    from desktop.core.ocr.rendered_pages import render_lines
    from desktop.gui.app import create_app
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.settings import AppSettings, SettingsStore

    work = Path(tempfile.mkdtemp(prefix="desklens-shots-"))
    SettingsStore(work / "data").save(AppSettings(max_visual_tokens=256, prepare_ahead=False))
    app, window = create_app(data_dir=work / "data", model_dir=model_dir)
    window.move(0, 0)
    window.resize(1100, 720)
    window.show()
    while not window.model_loaded:
        settle(200)
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
    shot = out / "legibility-warning.png"
    window.screen().grabWindow(0, 0, 0, 1100, 720).save(str(shot))
    print(f"wrote {shot}")
    window.close()
    app.quit()
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    target = Path(sys.argv[2]) if len(sys.argv) == 3 else ROOT / "docs" / "screenshots"
    raise SystemExit(main(Path(sys.argv[1]), target))
