"""An image in a script the fast OCR cannot read: the extraction says so and offers "Read
with AI" (the model reads those scripts), instead of an empty or garbled text; our own
screenshot styles get no such offer. Also after a restart (the stored JSON keeps the count)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from gui_support import SIGNAL_TIMEOUT_MS, text_image
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton

from desktop.core.images import load_image
from desktop.core.presets import PRESETS
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.messages import OcrMessage

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from ocr_styles_screens import make_chat_dark, make_form  # noqa: E402

CYRILLIC = "Счёт номер 4471 итого к оплате двенадцать рублей"


def cyrillic_page():
    from desktop.core.ocr.rendered_pages import Page, font

    page = Page(900, 420)
    for row in range(6):
        page.lines(30, 30 + row * 60, [CYRILLIC], font("sans", 24))
    return page.image


def extract(qtbot, window, image, name: str) -> OcrMessage:
    before = len([m for m in window.chat.messages() if isinstance(m, OcrMessage)])
    window.extraction.extract_text([ImageRef.of(load_image(image, name=name))])
    qtbot.waitUntil(
        lambda: len([m for m in window.chat.messages() if isinstance(m, OcrMessage)]) > before,
        timeout=SIGNAL_TIMEOUT_MS,
    )
    return [m for m in window.chat.messages() if isinstance(m, OcrMessage)][-1]


def read_with_ai(message: OcrMessage) -> list[QPushButton]:
    return [b for b in message.findChildren(QPushButton) if b.text() == "Read with AI"]


def test_a_cyrillic_page_offers_read_with_ai_and_our_screenshots_do_not(
    qtbot, launch, tiny_ir, tmp_path
):
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    ours = [
        (text_image("Invoice 4471 total 12.50"), "plain.png"),
        (make_chat_dark(random.Random(5), "chat").image, "chat.png"),
        (make_form(random.Random(5), "form").image, "form.png"),
    ]
    for image, name in ours:
        message = extract(qtbot, window, image, name)
        assert not message.unreadable and not read_with_ai(message), name
    foreign = extract(qtbot, window, cyrillic_page(), "letter.png")
    assert foreign.unreadable
    assert any("script it does not know" in label.text() for label in foreign.findChildren(QLabel))
    [button] = read_with_ai(foreign)

    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    request = blocker.args[0].request
    assert request.question.endswith(PRESETS["markdown"].prompt)  # the model reads it
    assert [ref.name for ref in request.images] == ["letter.png"]
    chat_id = window.conversation_id
    window.close()

    reopened = launch(data_dir=data)
    reopened.open_conversation(chat_id)
    shown = [m for m in reopened.chat.messages() if isinstance(m, OcrMessage)]
    assert [m.unreadable for m in shown] == [False, False, False, True]
