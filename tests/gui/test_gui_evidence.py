"""Where an answer came from (issue 40): after an answer about an image whose text the chat
extracted, the lines the answer quotes are outlined on the question's thumbnail, and a figure
that no line holds is named on the answer's card; again when the chat is reopened. The answer
is fixed (the tiny model writes gibberish); the extraction is the real fast OCR."""

from __future__ import annotations

import dataclasses
import json

from gui_support import SIGNAL_TIMEOUT_MS, send
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel

from desktop.core.engine import VLMEngine
from desktop.core.history import Role
from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import Thumbnail
from desktop.gui.widgets.chat_view import EVIDENCE_NOTE
from desktop.gui.widgets.messages import AssistantMessage, UserMessage

ANSWER = "The total due is 12450.50; the tax is 7,777.00."


def fixed_answer(monkeypatch, text: str) -> None:
    """The engine reads and answers as always; the answer's text is `text`."""
    original = VLMEngine.ask

    def ask(self, *args, **kwargs):
        return dataclasses.replace(original(self, *args, **kwargs), text=text)

    monkeypatch.setattr(VLMEngine, "ask", ask)


def page():
    lines = ["Invoice 4471", "Total due 12,450.50"]
    return render_lines(lines, size=44, width=900, height=260, top=30, ink=(0, 0, 0))


def extract(qtbot, window, pictures) -> list[dict]:
    """Extract text of `pictures` in the chat; their OCR lines, one list per picture."""
    window.extraction.extract_text([ImageRef.of(load_image(p)) for p in pictures])
    qtbot.waitUntil(
        lambda: sum(e.role is Role.OCR for e in window.session.transcript.entries) == len(pictures),
        timeout=SIGNAL_TIMEOUT_MS,
    )
    entries = [e for e in window.session.transcript.entries if e.role is Role.OCR]
    return [json.loads(e.ocr.json)["lines"] for e in entries]


def box_of(lines: list[dict], text: str) -> tuple[int, ...]:
    [box] = [tuple(line["box"]) for line in lines if text in line["text"]]
    return box


def question_thumbnail(window) -> Thumbnail:
    [question] = [m for m in window.chat.messages() if isinstance(m, UserMessage)]
    [thumb] = question.findChildren(Thumbnail)
    return thumb


def notes(window) -> list[str]:
    [answer] = [m for m in window.chat.messages() if isinstance(m, AssistantMessage)]
    labels = answer.findChildren(QLabel)
    return [label.text() for label in labels if label.accessibleName() == EVIDENCE_NOTE]


def green_at(thumb: Thumbnail, box) -> bool:
    pixmap = thumb.picture.pixmap()
    image = pixmap.toImage()
    scale = pixmap.width() / thumb.ref.size[0]
    x, y = round(box[0] * scale), round((box[1] + box[3]) / 2 * scale)
    near = [QColor(image.pixel(x + dx, y)) for dx in (-1, 0, 1)]
    return any(c.green() > 140 and c.red() < 60 for c in near)


def test_the_quoted_line_is_outlined_and_an_invented_figure_flagged(
    qtbot, launch, tiny_ir, monkeypatch, tmp_path
):
    fixed_answer(monkeypatch, ANSWER)
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    picture = page()
    transcript = window.session.transcript
    [lines] = extract(qtbot, window, [picture])
    total = box_of(lines, "12,450.50")

    result = send(qtbot, window, "What is the total?", [picture])
    assert result.answer.text == ANSWER and window.session.transcript is transcript
    thumb = question_thumbnail(window)
    qtbot.waitUntil(lambda: bool(thumb.evidence), timeout=SIGNAL_TIMEOUT_MS)
    assert thumb.evidence == (total,)  # the total's line only: "Invoice 4471" is not quoted
    assert green_at(thumb, total)
    [flagged, found] = notes(window)
    assert "7,777.00" in flagged and "12450.50" not in flagged
    assert found.startswith("1 line of the image")
    chat_id = result.request.conversation_id
    window.close()

    reopened = launch(data_dir=data, model_dir=tiny_ir)  # a restart: found again
    reopened.open_conversation(chat_id)
    thumb = question_thumbnail(reopened)
    qtbot.waitUntil(lambda: bool(thumb.evidence), timeout=SIGNAL_TIMEOUT_MS)
    assert thumb.evidence == (total,) and green_at(thumb, total)
    assert notes(reopened) == [flagged, found]


def test_without_an_extraction_nothing_is_looked_up(qtbot, launch, tiny_ir, monkeypatch):
    fixed_answer(monkeypatch, ANSWER)
    window = launch(model_dir=tiny_ir)
    send(qtbot, window, "What is the total?", [page()])
    assert window.evidence.pending == {}  # nothing submitted: no OCR of this image
    assert question_thumbnail(window).evidence == () and notes(window) == []


def send_grounded(qtbot, window, picture):
    """Asks about `picture` with "Use the extracted text" ticked; the AskResult."""
    from PySide6.QtCore import Qt

    window.composer.add_images([ImageRef.of(load_image(picture))])
    window.composer.ground_check.setChecked(True)
    window.composer.editor.setPlainText("What is the total?")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    return blocker.args[0]


def test_a_grounded_question_shows_the_evidence_of_the_ocr_it_was_grounded_in(
    qtbot, launch, tiny_ir, monkeypatch
):
    """No Extract text: "Use the extracted text" makes the service read the picture, and the
    answer's evidence is looked up in that read (AskResult.reads), not in a second OCR run."""
    fixed_answer(monkeypatch, ANSWER)
    window = launch(model_dir=tiny_ir)
    picture = page()
    result = send_grounded(qtbot, window, picture)
    assert result.request.grounded and "12,450.50" in result.prompt
    [read] = result.reads
    [total] = [line.box for line in read.lines if "12,450.50" in line.text]
    thumb = question_thumbnail(window)
    qtbot.waitUntil(lambda: bool(thumb.evidence), timeout=SIGNAL_TIMEOUT_MS)
    assert thumb.evidence == (tuple(total),) and green_at(thumb, total)
    assert "7,777.00" in notes(window)[0]


def test_the_chats_extraction_grounds_a_question_without_reading_the_picture_again(
    qtbot, launch, tiny_ir, monkeypatch
):
    """Issue 37: each picture is read once: a grounded question after Extract text is handed
    the extraction (`known_reads`) and the service's OCR engine is never asked."""
    from desktop.core.ocr import OcrEngine

    fixed_answer(monkeypatch, ANSWER)
    window = launch(model_dir=tiny_ir)
    picture = page()
    extract(qtbot, window, [picture])
    extracts = []
    original = OcrEngine.extract
    monkeypatch.setattr(
        OcrEngine, "extract", lambda self, *a, **k: extracts.append(1) or original(self, *a, **k)
    )
    result = send_grounded(qtbot, window, picture)
    assert [read.digest for read in result.request.known_reads] == [load_image(picture).digest]
    assert result.request.grounded and "12,450.50" in result.prompt
    assert extracts == []  # the service grounded from the extraction
    thumb = question_thumbnail(window)
    qtbot.waitUntil(lambda: bool(thumb.evidence), timeout=SIGNAL_TIMEOUT_MS)
