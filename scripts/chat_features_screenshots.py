#!/usr/bin/env python3
"""Screenshots of issue 17's chat features for docs/GUI.md: edit and resend, regenerate, the
Export menu, My prompts, "Use the extracted text" and "Read with AI".

    Xvfb :9 -screen 0 1400x900x24 &
    DISPLAY=:9 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/chat_features_screenshots.py MODEL_DIR

MODEL_DIR is a converted model (the tests' tiny INT8 one: its answers are gibberish, so the
answers in the pictures are short and meaningless; the widgets and the flow are the app's).
The app runs in this process on an empty data folder; the X screen is captured whole, so menus
and dialogs over the window are in the picture.
"""

from __future__ import annotations

import random
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support"), str(ROOT / "bench")]

SHOTS = ROOT / "docs" / "screenshots"
SIGNAL_MS = 120_000


def settle(ms: int = 300) -> None:
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    QApplication.processEvents()


def shoot(name: str) -> None:
    """The X screen's top 1280x800 (menus and dialogs over the window are in it)."""
    from PySide6.QtWidgets import QApplication

    settle()
    screen = QApplication.primaryScreen()
    screen.grabWindow(0, 0, 0, 1280, 800).save(str(SHOTS / f"{name}.png"))
    print(f"wrote {SHOTS / name}.png")


def wait_for(signal) -> object:
    from PySide6.QtCore import QEventLoop, QTimer

    loop, got = QEventLoop(), []
    signal.connect(lambda *args: (got.append(args), loop.quit()))
    QTimer.singleShot(SIGNAL_MS, loop.quit)
    loop.exec()
    return got[0][0] if got and got[0] else None


def ask(window, question: str, images=()) -> None:
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    window.composer.add_images([ImageRef.of(load_image(i, name=n)) for i, n in images])
    window.composer.editor.setPlainText(question)
    window.composer.send_button.click()
    wait_for(window.asking.answer_shown)


def open_window(model_dir: Path, size: tuple[int, int] = (1100, 720), before=None):
    """The app on an empty data folder, shown at the screen's top left at `size`, once its
    model is loaded; `before(data_dir)` runs first (settings to start with)."""
    from desktop.gui.app import create_app

    data = Path(tempfile.mkdtemp(prefix="desklens-shots-")) / "data"
    if before is not None:
        before(data)
    app, window = create_app(data_dir=data, model_dir=model_dir)
    window.move(0, 0)
    window.resize(*size)
    window.show()
    while not window.model_loaded:
        settle(200)
    return app, window


def grab(window, target: Path, width: int = 1100, height: int = 720) -> None:
    """The X screen's top left as drawn (window frame, dialogs over it and all)."""
    settle()
    window.screen().grabWindow(0, 0, 0, width, height).save(str(target))
    print(f"wrote {target}")


def run_script(main, doc: str) -> None:
    """`script MODEL_DIR [OUT]`: OUT defaults to docs/screenshots."""
    if len(sys.argv) not in (2, 3):
        raise SystemExit(doc)
    target = Path(sys.argv[2]) if len(sys.argv) == 3 else SHOTS
    raise SystemExit(main(Path(sys.argv[1]), target))


def main(model_dir: Path) -> int:
    from ocr_styles_documents import make_invoice
    from PySide6.QtCore import QPoint, QTimer

    from desktop.core.user_presets import PresetBook, UserPreset
    from desktop.gui.app import create_app
    from desktop.gui.panels.presets_editor import PresetsEditor
    from desktop.gui.widgets.messages import OcrMessage, UserMessage

    work = Path(tempfile.mkdtemp(prefix="desklens-shots-"))
    app, window = create_app(data_dir=work / "data", model_dir=model_dir)
    window.move(0, 0)
    window.resize(1280, 800)
    window.show()
    while not window.model_loaded:
        settle(200)
    window.apply_settings(replace(window.settings, max_new_tokens=12))
    window.own_presets.replace(
        PresetBook(
            (
                UserPreset("Invoice fields", "List the invoice number, date and total.", 256),
                UserPreset("Translate", "Translate the text in the image into English."),
            ),
            "Answer briefly.",
        )
    )
    invoice = make_invoice(random.Random(4), "invoice").image
    ask(window, "What is the total of this invoice?", [(invoice, "invoice.png")])
    ask(window, "And when is it due?")

    first = next(m for m in window.chat.messages() if isinstance(m, UserMessage))
    window.rewinding.edit(first.entry_id)
    window.composer.editor.setPlainText("What is the total, tax included?")
    shoot("edit-and-resend")
    window.rewinding.cancel_edit()

    menu = window.exporting.button.menu()
    QTimer.singleShot(0, lambda: menu.popup(window.exporting.button.mapToGlobal(QPoint(0, 30))))
    settle()
    shoot("export-menu")
    menu.close()

    editor = PresetsEditor(window.own_presets.book, window.storage, window)
    editor.show()
    editor.move(window.geometry().center() - editor.rect().center())
    shoot("my-prompts")
    editor.close()

    window.sidebar.select(None)
    window.composer.ground_check.setChecked(True)
    ask(window, "Which invoice number is it?", [(invoice, "invoice.png")])
    window.composer.add_images(window.chat.images())
    window.composer.editor.setPlainText("Is it paid?")
    shoot("grounded")
    window.composer.clear_images()
    window.composer.editor.clear()

    window.sidebar.select(None)
    from desktop.core.images import load_image
    from desktop.core.ocr.rendered_pages import Page, font
    from desktop.gui.image_ref import ImageRef

    page = Page(900, 420)
    for row in range(6):
        page.lines(30, 30 + row * 60, ["Счёт № 4471, итого к оплате 12,50 руб."], font("sans", 24))
    window.extraction.extract_text([ImageRef.of(load_image(page.image, name="letter.png"))])
    while not any(isinstance(m, OcrMessage) for m in window.chat.messages()):
        settle(200)
    window.composer.editor.clear()
    shoot("read-with-ai")
    window.close()
    app.quit()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        raise SystemExit(2)
    raise SystemExit(main(Path(sys.argv[1])))
