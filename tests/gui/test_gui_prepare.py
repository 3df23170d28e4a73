"""Reading ahead from the GUI: attached images (and a reopened chat) are prepared on the engine
thread while the question is typed, so Send feeds only the question's tokens.

A preparation is held "mid-way" by a VLMEngine.prepare that waits inside the worker until its
cancel event is set (then the real one runs: it encodes the images, as the uncuttable vision
call would have, and stops before the prefill). Tests wait for worker signals, never sleep.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gui_support import SIGNAL_TIMEOUT_MS, drop_on, file_mime, save_png, send, text_image
from PySide6.QtCore import Qt

from desktop.core.chat import AnswerStats
from desktop.core.images import ImageError, load_image
from desktop.core.pictures import SHARED
from desktop.gui.image_ref import ImageRef
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.widgets.messages import AssistantMessage, ErrorMessage, OcrMessage, UserMessage
from desktop.gui.widgets.status import stats_text

WAIT_S = SIGNAL_TIMEOUT_MS / 1000


@dataclass
class PrepareHold:
    """The first `held` preparations wait for their cancel event, then for `resume`."""

    held: int = 1
    started: threading.Event = field(default_factory=threading.Event)
    resume: threading.Event = field(default_factory=threading.Event)
    calls: list[list[str]] = field(default_factory=list)  # the digests each call was given


@pytest.fixture
def count_prepare(monkeypatch) -> PrepareHold:
    """Records every VLMEngine.prepare call; holds none."""
    from desktop.core.engine import VLMEngine

    hold = PrepareHold(held=0)
    hold.resume.set()
    original = VLMEngine.prepare

    def prepare(engine, conversation, images=(), settings=None, cancel=None):
        hold.calls.append([image.digest for image in images])
        if len(hold.calls) <= hold.held:
            hold.started.set()
            cancel.wait(WAIT_S)
            hold.resume.wait(WAIT_S)
        return original(engine, conversation, images, settings, cancel)

    monkeypatch.setattr(VLMEngine, "prepare", prepare)
    return hold


@pytest.fixture
def held_prepare(count_prepare) -> PrepareHold:
    count_prepare.held = 1
    return count_prepare


def results_of(window) -> list:
    """Every PrepareResult from now on, in order, on the GUI thread after the flow saw it
    (the worker's own signal would call this on its thread, before the flow)."""
    results: list = []
    window.engine.prepared.connect(results.append)
    return results


def ref_of(picture, name: str = "shot.png") -> ImageRef:
    return ImageRef.of(load_image(picture, name=name))


def attach(qtbot, window, *refs: ImageRef) -> None:
    window.composer.add_images(list(refs))
    qtbot.waitUntil(lambda: window.preparing.settled, timeout=SIGNAL_TIMEOUT_MS)


def wait_ready(qtbot, window, results: list, count: int = 1):
    """Waits for the `count`-th result; it must be a completed preparation."""
    qtbot.waitUntil(lambda: len(results) >= count, timeout=SIGNAL_TIMEOUT_MS)
    preparation = results[count - 1].preparation
    assert preparation is not None and preparation.status == "ready", preparation
    return preparation


def test_an_attached_image_is_read_before_send(qtbot, launch, tiny_ir, tmp_path):
    window = launch(model_dir=tiny_ir)
    results = results_of(window)
    shot = save_png(text_image("Invoice 2291 due today", (640, 360)), tmp_path / "invoice.png")
    drop_on(window, file_mime(shot))  # the real intake: decoded in the pool, then attached

    preparation = wait_ready(qtbot, window, results)
    assert window.composer.hint.endswith("Ready")
    assert preparation.stats.images_encoded == 1
    [request] = [r.request for r in results]
    assert request.conversation_id is None and [ref.name for ref in request.images] == [
        "invoice.png"
    ]

    result = send(qtbot, window, "What is due?")

    stats = result.answer.stats
    assert result.answer.ok, result.answer.error
    assert stats.images_cached == 1 and stats.images_encoded == 0
    assert stats.visual_tokens_full > 100 and stats.visual_tokens > 0
    # Only the question and the assistant's opening are left: a few tokens, not the image
    # (its kept tokens; pruning leaves out the blocks that repeat).
    assert stats.input_tokens < stats.visual_tokens
    assert preparation.stats.input_tokens > stats.visual_tokens
    assert window.composer.hint == ""


def test_a_send_during_the_preparation_continues_from_it(qtbot, launch, tiny_ir, held_prepare):
    window = launch(model_dir=tiny_ir)
    results = results_of(window)
    attach(qtbot, window, ref_of(text_image("Ticket 77", (640, 360))))
    assert held_prepare.started.wait(WAIT_S)
    assert window.composer.hint.endswith("Reading the image…")

    result = send(qtbot, window, "Which ticket?")  # cancels the preparation, then asks

    assert result.answer.ok, result.answer.error
    [prepared] = results
    assert prepared.preparation.status == "cancelled"
    # The image the preparation had encoded is not encoded again.
    assert result.answer.stats.images_encoded == 0 and result.answer.stats.images_cached == 1
    assert held_prepare.calls == [[prepared.request.images[0].digest]]  # nothing re-run after


def test_removing_the_image_cancels_and_the_question_goes_without_it(
    qtbot, launch, tiny_ir, held_prepare, sample_image
):
    window = launch(model_dir=tiny_ir)
    results = results_of(window)
    attach(qtbot, window, ref_of(sample_image))
    assert held_prepare.started.wait(WAIT_S)
    [chip] = window.composer.chips()
    qtbot.mouseClick(chip.close_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(results) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert results[0].preparation.status == "cancelled"
    assert window.composer.hint == ""

    result = send(qtbot, window, "Anything attached?")

    assert result.answer.ok, result.answer.error
    assert result.answer.stats.visual_tokens == 0 and result.request.images == ()
    assert len(held_prepare.calls) == 1  # an empty new chat has nothing to read ahead
    user = next(m for m in window.chat.messages() if isinstance(m, UserMessage))
    assert user.images == []


def test_newer_requests_supersede_queued_ones(qtbot, launch, tiny_ir, held_prepare):
    window = launch(model_dir=tiny_ir)
    held_prepare.resume.clear()  # the first stays in the worker even after its cancel
    results = results_of(window)
    first, second = ref_of(text_image("First")), ref_of(text_image("Second"))
    attach(qtbot, window, first)
    assert held_prepare.started.wait(WAIT_S)
    attach(qtbot, window, second)  # queued behind the held one: [first, second]
    window.composer.remove_image(first)  # supersedes it before it starts: [second]
    qtbot.waitUntil(lambda: window.preparing.settled, timeout=SIGNAL_TIMEOUT_MS)
    held_prepare.resume.set()

    wait_ready(qtbot, window, results, 3)
    assert [r.preparation.status if r.preparation else None for r in results] == [
        "cancelled",
        None,  # never run: its cancel was set before the worker reached it
        "ready",
    ]
    assert held_prepare.calls == [[first.digest], [second.digest]]
    assert window.composer.hint.endswith("Ready")


def test_switching_chat_mid_preparation(qtbot, launch, tiny_ir, held_prepare, sample_image):
    window = launch(model_dir=tiny_ir)
    older = send(qtbot, window, "An earlier chat").request.conversation_id
    window.sidebar.select(None)  # a new chat
    results = results_of(window)
    image = ref_of(sample_image)
    attach(qtbot, window, image)
    assert held_prepare.started.wait(WAIT_S)

    window.sidebar.select(older)  # the image stays attached, now for the older chat

    preparation = wait_ready(qtbot, window, results, 2)
    first, second = results
    assert first.preparation.status == "cancelled" and first.request.conversation_id is None
    assert second.request.conversation_id == older
    assert preparation.stats.images_cached == 1  # encoded by the cancelled one
    result = send(qtbot, window, "And this picture?")
    assert result.answer.ok, result.answer.error
    assert result.request.conversation_id == older
    assert result.answer.stats.images_cached == 1
    assert result.answer.stats.input_tokens < result.answer.stats.visual_tokens


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux /proc")
def test_closing_mid_preparation_exits_cleanly(qtbot, launch, tiny_ir, held_prepare, sample_image):
    from test_gui_shutdown import python_threads

    window = launch(model_dir=tiny_ir)
    before = python_threads()
    attach(qtbot, window, ref_of(sample_image))
    assert held_prepare.started.wait(WAIT_S)

    window.close()  # cancels the preparation, then waits for the engine thread

    assert window.engine.thread.isFinished() and window.ocr.thread.isFinished()
    qtbot.waitUntil(lambda: python_threads() <= before, timeout=SIGNAL_TIMEOUT_MS)


def test_with_the_setting_off_nothing_is_read_ahead(
    qtbot, launch, tiny_ir, count_prepare, sample_image, tmp_path
):
    data = tmp_path / "data"
    data.mkdir()
    SettingsStore(data).save(AppSettings(prepare_ahead=False))
    window = launch(data_dir=data, model_dir=tiny_ir)
    assert not window.settings.prepare_ahead
    attach(qtbot, window, ref_of(sample_image))
    assert window.composer.hint == ""

    result = send(qtbot, window, "Read it now")

    assert result.answer.ok and result.answer.stats.images_encoded == 1
    assert count_prepare.calls == []

    # Turned on from the settings: the next attachment is read ahead.
    results = results_of(window)
    window.apply_settings(AppSettings(prepare_ahead=True, model_dir=window.settings.model_dir))
    attach(qtbot, window, ref_of(text_image("Later")))
    wait_ready(qtbot, window, results)
    assert SettingsStore(data).load().prepare_ahead


def test_a_reopened_chat_has_its_history_read_ahead(qtbot, launch, tiny_ir, sample_image, tmp_path):
    data = tmp_path / "data"
    first = launch(data_dir=data, model_dir=tiny_ir)
    assert send(qtbot, first, "What is in the picture?", [sample_image]).answer.ok
    first.close()

    # The app starts on the chat used last (issue 29), and reads its history ahead.
    window = launch(data_dir=data, model_dir=tiny_ir, wait_model=False)
    results = results_of(window)
    conversation_id = window.sidebar.list.item(0).data(Qt.ItemDataRole.UserRole)
    assert window.conversation_id == conversation_id
    assert [type(m) for m in window.chat.messages()] == [UserMessage, AssistantMessage]

    preparation = wait_ready(qtbot, window, results)
    assert results[0].request.conversation_id == conversation_id
    assert results[0].request.images == ()
    assert preparation.stats.images_encoded == 1  # the earlier turn's image, from the history
    result = send(qtbot, window, "And what colour is the bar?")
    assert result.answer.ok, result.answer.error
    assert result.answer.stats.images_encoded == 0
    # Only the new turn is read (23 tokens with this tiny model's tokenizer), never the 88 of
    # the held history and image again.
    assert result.answer.stats.input_tokens < preparation.stats.input_tokens / 2

    # Back to the same chat after its answer: the state holds it, nothing to read again.
    window.sidebar.select(None)
    window.sidebar.select(conversation_id)
    qtbot.waitUntil(lambda: window.preparing.settled, timeout=SIGNAL_TIMEOUT_MS)
    assert len(results) == 1


def test_text_extraction_goes_first_and_its_text_becomes_hints(
    qtbot, launch, tiny_ir, held_prepare, tmp_path
):
    window = launch(model_dir=tiny_ir)
    results = results_of(window)
    attach(qtbot, window, ref_of(text_image("Total due 320.04", (640, 360)), "bill.png"))
    assert held_prepare.started.wait(WAIT_S)

    chip = window.composer.chips()[0]
    next(a for a in chip.actions() if a.text() == "Extract text").trigger()

    # The OCR job cancels the preparation at once; once the OCR is done it is asked again,
    # and the second one continues from the first (the image is not encoded twice).
    preparation = wait_ready(qtbot, window, results, 2)
    assert results[0].preparation.status == "cancelled"
    [ocr] = [m for m in window.chat.messages() if isinstance(m, OcrMessage)]
    assert "320.04" in ocr.text()
    assert preparation.stats.images_cached == 1 and preparation.stats.images_encoded == 0
    assert not window.ocr.busy

    result = send(qtbot, window, "How much is due?")
    assert result.answer.ok, result.answer.error
    assert any("Total due 320.04" in hint for hint in result.request.hints)
    assert result.answer.stats.input_tokens < result.answer.stats.visual_tokens


def test_an_image_that_cannot_be_read_fails_quietly_until_send(qtbot, launch, tiny_ir, tmp_path):
    window = launch(model_dir=tiny_ir)
    results = results_of(window)
    path = save_png(text_image("Gone soon"), tmp_path / "gone.png")
    ref = ImageRef.of_file(load_image(path), path)
    path.unlink()  # moved away after it was attached,
    SHARED.clear()  # and its pixels pushed out of the picture store by later pictures
    with pytest.raises(ImageError) as expected:
        ref.load()
    attach(qtbot, window, ref)
    qtbot.waitUntil(lambda: len(results) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert results[0].preparation.status == "error"
    assert window.composer.hint == "" and window.notice.text() == ""

    result = send(qtbot, window, "What does it say?")

    assert result.answer.error == str(expected.value)
    error = window.chat.messages()[-1]
    assert isinstance(error, ErrorMessage) and error.text() == str(expected.value)


def test_stats_line_shows_accepted_drafts_only_when_drafting_ran():
    plain = AnswerStats(ttft_s=0.5, tokens_per_s=12.0, generated_tokens=40)
    assert stats_text(plain) == "TTFT 0.50 s · 12.0 tok/s"
    drafted = AnswerStats(
        ttft_s=0.5, tokens_per_s=30.0, generated_tokens=200, drafted_tokens=180, accepted_tokens=120
    )
    assert stats_text(drafted).endswith(" · 120/180 drafted tokens accepted")


def test_the_setting_round_trips_and_is_on_by_default(tmp_path):
    store = SettingsStore(tmp_path)
    assert store.load().prepare_ahead
    store.save(AppSettings(prepare_ahead=False))
    assert not SettingsStore(tmp_path).load().prepare_ahead
    (tmp_path / "settings.ini").write_text("[app]\nprepare_ahead=perhaps\n")
    assert SettingsStore(tmp_path).load().prepare_ahead  # damaged: the default


def test_the_settings_dialog_has_the_checkbox(qtbot):
    from desktop.gui.panels.settings_dialog import SettingsDialog

    dialog = SettingsDialog(AppSettings())
    qtbot.addWidget(dialog)
    assert dialog.prepare_check.isChecked()
    dialog.prepare_check.setChecked(False)
    assert not dialog.result_settings().prepare_ahead
