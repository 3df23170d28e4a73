"""The readability guard in the app (issue 40): an attached page whose text the engine's
resize would make too small is read by the real fast OCR off the GUI thread, and one sentence
says so above the composer with the remedies in place. "More detail" asks the next question
(only it) at a budget that keeps the text readable; "Use the extracted text" grounds it;
"Ask about a region…" opens the box drawing. Large text gets no warning."""

from __future__ import annotations

import re

import pytest
from gui_support import SIGNAL_TIMEOUT_MS, send
from PySide6.QtCore import Qt

from desktop.core.images import load_image
from desktop.core.ocr.rendered_pages import render_lines
from desktop.gui.image_ref import ImageRef
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.widgets.region_picker import RegionDialog

# As in tests/cli/test_readability_guard.py: the fast OCR finds 10 px text on this page, and
# at 160 visual tokens its lines come out under the threshold; 40 px text stays readable.
PAGE = (1400, 1000)
BUDGET = 160
SENTENCE = re.compile(
    r"The text in shot\.png will be about \d px tall after resizing — too small for the "
    r"model to read\."
)


def page(font_size: int) -> ImageRef:
    lines = [f"Statement line {n}: paid 1,{n:03d}.50 to Acme Widgets" for n in range(6)]
    image = render_lines(lines, size=font_size, width=PAGE[0], height=PAGE[1])
    return ImageRef.of(load_image(image, name="shot.png"))


@pytest.fixture
def window(launch, tiny_ir, tmp_path):
    data = tmp_path / "data"
    SettingsStore(data).save(AppSettings(max_visual_tokens=BUDGET, prepare_ahead=False))
    return launch(data_dir=data, model_dir=tiny_ir)


def attach_and_read(qtbot, window, ref: ImageRef) -> None:
    """Attaches `ref` and waits for the guard's read of it (done off the GUI thread)."""
    reader = window.legibility.reader
    with qtbot.waitSignal(reader.read, timeout=SIGNAL_TIMEOUT_MS):
        window.composer.add_images([ref])
    assert not window.legibility.pending


def test_small_text_is_warned_of_and_more_detail_asks_the_next_question_at_a_readable_budget(
    qtbot, window
):
    bar = window.page.legibility_bar
    ref = page(10)
    attach_and_read(qtbot, window, ref)
    assert SENTENCE.fullmatch(bar.text()), bar.text()
    assert bar.detail_button.isVisibleTo(bar) and bar.region_button.isVisibleTo(bar)

    qtbot.mouseClick(bar.detail_button, Qt.MouseButton.LeftButton)
    assert bar.text() == ""  # readable at the budget the question will be asked with
    tokens = window.legibility.detail_for([ref])
    assert tokens is not None and tokens > BUDGET
    assert window.settings.max_visual_tokens == BUDGET  # the app's setting is untouched

    result = send(qtbot, window, "What was paid on line 3?")
    assert result.answer.ok
    assert result.request.settings.max_visual_tokens == tokens
    assert BUDGET < result.answer.stats.visual_tokens_full <= tokens
    assert bar.text() == ""  # the composer is empty

    window.composer.add_images([ref])  # the next question: the usual budget, warned again
    assert SENTENCE.fullmatch(bar.text())
    assert window.asking.next_settings().max_visual_tokens is None


def test_using_the_extracted_text_checks_the_box_and_removing_or_dismissing_ends_the_warning(
    qtbot, window
):
    bar = window.page.legibility_bar
    ref = page(10)
    attach_and_read(qtbot, window, ref)
    assert SENTENCE.fullmatch(bar.text())
    qtbot.mouseClick(bar.ground_button, Qt.MouseButton.LeftButton)
    assert window.composer.ground_check.isChecked()
    assert bar.text() == ""

    window.composer.ground_check.setChecked(False)
    assert SENTENCE.fullmatch(bar.text())
    window.composer.remove_image(ref)
    assert bar.text() == ""

    window.composer.add_images([ref])  # read already: warned at once
    assert SENTENCE.fullmatch(bar.text())
    qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    window.composer.ground_check.toggle()
    window.composer.ground_check.toggle()
    assert bar.text() == ""  # dismissed for this image, until it is sent


def test_ask_about_a_region_opens_the_box_drawing_on_the_warned_image(qtbot, window):
    bar = window.page.legibility_bar
    ref = page(10)
    attach_and_read(qtbot, window, ref)
    qtbot.mouseClick(bar.region_button, Qt.MouseButton.LeftButton)
    dialog = window.composer.findChild(RegionDialog)
    assert dialog is not None and dialog.isVisible()
    assert dialog.canvas.ref is ref
    dialog.reject()


def test_large_text_is_not_warned_of(qtbot, window):
    attach_and_read(qtbot, window, page(40))
    assert window.page.legibility_bar.text() == ""


def test_reading_ahead_follows_more_detail(qtbot, launch, tiny_ir, tmp_path):
    data = tmp_path / "data"
    SettingsStore(data).save(AppSettings(max_visual_tokens=BUDGET, prepare_ahead=True))
    window = launch(data_dir=data, model_dir=tiny_ir)
    bar = window.page.legibility_bar
    attach_and_read(qtbot, window, page(10))
    assert SENTENCE.fullmatch(bar.text())

    def at_more_detail(result) -> bool:
        tokens = result.request.settings.max_visual_tokens
        return tokens is not None and tokens > BUDGET and result.preparation.status == "ready"

    with qtbot.waitSignal(
        window.engine.prepared, check_params_cb=at_more_detail, timeout=SIGNAL_TIMEOUT_MS
    ):
        qtbot.mouseClick(bar.detail_button, Qt.MouseButton.LeftButton)


def test_without_this_computers_model_nothing_is_read(launch):
    """The resize is not known (no model yet, or a server's: `ModelInfo.vision` is None)."""
    window = launch()
    window.composer.add_images([page(10)])
    assert not window.legibility.pending
    assert window.page.legibility_bar.text() == ""


def test_a_picture_the_chat_extracted_is_judged_from_its_extraction(qtbot, window, monkeypatch):
    from desktop.core.ocr import OcrEngine

    ref = page(10)
    with qtbot.waitSignal(window.ocr.job_finished, timeout=SIGNAL_TIMEOUT_MS):
        window.extraction.extract_text([ref])  # Extract text: stored with the chat
    reads = []
    original = OcrEngine.extract

    def counted(engine, *args, **kwargs):
        reads.append(1)
        return original(engine, *args, **kwargs)

    monkeypatch.setattr(OcrEngine, "extract", counted)
    attach_and_read(qtbot, window, page(10))  # the same picture, attached anew
    assert SENTENCE.fullmatch(window.page.legibility_bar.text())
    assert reads == []  # not read again


def test_the_guards_read_grounds_the_question_without_reading_the_picture_again(
    qtbot, window, monkeypatch
):
    """Its own remedy, "Use the extracted text", takes the guard's read of the picture: the
    service is handed it (`known_reads`) and the fast OCR does not read the picture twice."""
    from desktop.core.ocr import OcrEngine

    ref = page(10)
    attach_and_read(qtbot, window, ref)
    extracts = []
    original = OcrEngine.extract
    monkeypatch.setattr(
        OcrEngine, "extract", lambda self, *a, **k: extracts.append(1) or original(self, *a, **k)
    )
    qtbot.mouseClick(window.page.legibility_bar.ground_button, Qt.MouseButton.LeftButton)
    result = send(qtbot, window, "What was paid on line 3?")
    assert [read.digest for read in result.request.known_reads] == [ref.digest]
    assert result.request.grounded and "Acme Widgets" in result.prompt
    assert extracts == []  # grounded from the guard's read
    assert result.reads[0] is not None and result.reads[0].lines
