#!/usr/bin/env python3
"""Where an answer came from, for docs/GUI.md (issue 40): an invoice extracted in the chat, an
answer quoting its total, and the image viewer opened by clicking the figure, the quoted line
outlined and flashing.

    Xvfb :9 -screen 0 1400x900x24 &
    DISPLAY=:9 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/evidence_screenshot.py MODEL_DIR [OUT]

MODEL_DIR is a converted model (the tests' tiny INT8 one). Its answers are gibberish, so the
answer's text is fixed here (the engine still reads the question and the image, as in
tests/gui/test_gui_evidence.py); the extraction, the lookup and the viewer are the app's. OUT
(default docs/screenshots) gets evidence-viewer.png.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / d) for d in ("", "tests/support", "bench", "scripts")]

ANSWER = "The total due is **12,450.50**, for invoice 4471; no tax of 7,777.00 is listed."
LINES = ["ACME Widgets GmbH", "Invoice 4471", "Date 2026-11-17", "Total due 12,450.50"]


def main(model_dir: Path, out: Path) -> int:
    from chat_features_screenshots import ask, grab, open_window, settle

    from desktop.core.engine import VLMEngine
    from desktop.core.history import Role
    from desktop.core.images import load_image
    from desktop.core.ocr.rendered_pages import render_lines
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.widgets.image_viewer import ImageViewer
    from desktop.gui.widgets.messages import AssistantMessage

    original = VLMEngine.ask

    def fixed(self, *args, **kwargs):  # the words only: the engine reads as always
        return dataclasses.replace(original(self, *args, **kwargs), text=ANSWER)

    VLMEngine.ask = fixed  # type: ignore[method-assign]
    app, window = open_window(model_dir)
    picture = render_lines(LINES, size=40, width=900, height=420, top=40, ink=(0, 0, 0))
    window.extraction.extract_text([ImageRef.of(load_image(picture, name="invoice.png"))])
    while not any(e.role is Role.OCR for e in window.session.transcript.entries):
        settle(200)
    ask(window, "What is the total due?", [(picture, "invoice.png")])
    [answer] = [m for m in window.chat.messages() if isinstance(m, AssistantMessage)]
    labels = []
    while not labels:
        settle(200)
        labels = [w for w in answer.findChildren(object) if 'href="evidence:' in _text(w)]
    label = labels[0]
    link = _text(label).split('href="', 1)[1].split('"', 1)[0]
    label.linkActivated.emit(link)  # as a click on "12,450.50" sends it
    settle(700)  # mid-flash
    viewers = [v for v in window.findChildren(ImageViewer) if v.isVisible()]
    if not viewers:
        raise SystemExit("no image viewer opened")
    viewers[0].move(560, 40)
    viewers[0].resize(520, 320)
    grab(window, out / "evidence-viewer.png")
    window.close()
    app.quit()
    return 0


def _text(widget) -> str:
    text = getattr(widget, "text", None)
    return text() if callable(text) and isinstance(text(), str) else ""


if __name__ == "__main__":
    from chat_features_screenshots import run_script

    run_script(main, __doc__ or "")
