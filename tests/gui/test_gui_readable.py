"""Every message readable (issue 29): the download's error wraps and Details speaks in
sentences; after a Local API request the next answer says what it waits for and the chat is
still held (issue 37); a blank answer says so; the drafted figure is each answer's own; a second
`desklens` says what it did; a QR link with no browser says so."""

from __future__ import annotations

import argparse
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from gui_support import SIGNAL_TIMEOUT_MS, hold_after_first_token, save_png, send, text_image
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from desktop.core.chat import Answer, AnswerStats
from desktop.core.conversation import PrepareRequest
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.workers.engine_worker import PrepareResult

LONG_ERROR = (
    "The download of model.bin stopped: the disk is full (28 GB free of the 30 GB needed). "
    "What was downloaded so far (1.2 GB) is kept in the models folder: Download continues "
    "from there once there is room."
)


def settle() -> None:
    for _ in range(3):
        QApplication.processEvents()


# --- item 2: the first-run download --------------------------------------------------------


def test_a_long_download_error_wraps_inside_the_card(qtbot, launch):
    window = launch()
    window.resize(640, 480)
    box = window.first_run.download
    box._on_line(json.dumps({"event": "error", "text": LONG_ERROR, "code": 1}))
    box._on_finished(1, False)
    settle()
    label = box.status_label
    assert label.text() == LONG_ERROR and label.wordWrap()
    assert label.objectName() == "errorText"
    # All of it fits in the card's width, on several lines.
    assert label.width() <= box.width()
    assert label.height() >= 2 * label.fontMetrics().height()  # on several lines


def test_details_shows_sentences_and_opens_in_view(qtbot, launch):
    window = launch()
    window.resize(800, 480)
    panel = window.first_run
    for event in (
        {"event": "step", "text": "Checking OpenVINO/model on the hub…"},
        {"event": "progress", "done": 10, "total": 100, "speed": 5, "eta_s": 18, "file": "a"},
        {"event": "error", "text": LONG_ERROR, "code": 1},
    ):
        panel.download.line.emit(json.dumps(event))
    panel.download.line.emit("urllib3: connection pool is full")  # not an event: kept as is
    holder = window.first_run_holder

    def log_in_view() -> bool:
        """Scrolled into view in its holder, not cut at the card's edge."""
        top_left = panel.log.mapTo(holder.viewport(), QPoint())
        shown = QRect(top_left, panel.log.size()) & holder.viewport().rect()
        return shown.height() >= min(panel.log.height(), holder.viewport().height() - 16)

    panel.details_button.click()
    qtbot.waitUntil(lambda: panel.log.isVisible() and log_in_view(), timeout=5000)
    log = panel.log.toPlainText().splitlines()
    assert log == [
        "Checking OpenVINO/model on the hub…",
        f"Error: {LONG_ERROR}",
        "urllib3: connection pool is full",
    ]


# --- item 4: the Local API and the next answer ---------------------------------------------


@pytest.fixture
def api_window(launch, tiny_ir, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    SettingsStore(data).save(AppSettings(prepare_ahead=True, local_api=True, local_api_port=0))
    return launch(data_dir=data, model_dir=tiny_ir)


def test_an_api_request_never_makes_the_next_question_read_the_chat_again(
    qtbot, api_window, sample_image
):
    """Issue 37: a Local API request ran a second conversation service over the window's
    engine and took the chat out of its KV state; the next question read the whole chat again
    (2.4 s instead of 0.08 s on the tiny model) while the status bar said "Ready". The request
    now runs through the window's own worker and service, in a lane of its own: the chat stays
    held, nothing is read back, and the next question feeds only itself."""
    import openai

    window = api_window
    api = window.local_api
    assert api.running
    assert window.status.api_label.isVisible() and window.status.api_label.text() == "API on"
    assert api.server.url in window.status.api_label.toolTip()
    first = send(qtbot, window, "What is in the picture?", [sample_image])
    assert first.answer.ok
    assert window.engine.status.holds == window.conversation_id is not None
    assert window.asking._waiting_text() == "Thinking…"  # the state holds the chat

    busy: list[bool] = []
    api.busy_changed.connect(busy.append)
    prepared: list = []
    window.engine.prepared.connect(prepared.append)
    client = openai.OpenAI(base_url=api.server.url, api_key=api.token(), max_retries=0)
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(
            client.chat.completions.create,
            model="desklens",
            messages=[{"role": "user", "content": "Hello"}],
            max_tokens=4,
        )
        qtbot.waitUntil(future.done, timeout=SIGNAL_TIMEOUT_MS)
    assert future.result().choices
    # The answer can reach the client before the engine thread's "ended" reaches this thread.
    qtbot.waitUntil(lambda: busy == [True, False], timeout=SIGNAL_TIMEOUT_MS)
    assert not window.engine.status.api
    # The chat is still held: nothing to read back, and the answer says it only thinks.
    assert window.engine.status.holds == window.conversation_id
    qtbot.waitUntil(lambda: window.preparing.settled, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.hint == ""
    assert window.asking._waiting_text() == "Thinking…"
    second = send(qtbot, window, "And the colour?")
    assert second.answer.ok and prepared == []  # no read-back ran before it
    # What the engine read: the question and the turn's ends, not the chat (its prompt is
    # the chat so far, the image included, and the question).
    stats = second.answer.stats
    prompt = stats.context_tokens - stats.generated_tokens
    assert stats.images_encoded == 0 and stats.input_tokens * 3 < prompt
    assert window.engine.status.holds == window.conversation_id


def test_the_next_answer_says_what_it_waits_for(qtbot, api_window, sample_image):
    window = api_window
    asking, engine = window.asking, window.engine
    assert asking._waiting_text() == "Thinking…"  # a new chat: nothing to read
    assert send(qtbot, window, "What is in the picture?", [sample_image]).answer.ok
    engine._on_api_busy(True)  # as the worker says when an API request starts
    assert asking._waiting_text() == "Waiting for a Local API request to finish…"
    assert window.status.api_label.text() == "API: answering a request…"
    engine._on_api_busy(False)
    assert asking._waiting_text() == "Thinking…"  # it left the chat held
    engine._on_prepared(PrepareResult(PrepareRequest(()), None, holds=None))  # held no more
    assert asking._waiting_text() == "Reading the chat…"


def test_the_status_never_says_ready_while_stop_shows(qtbot, api_window):
    window = api_window
    holding = hold_after_first_token(window)
    window.composer.editor.setPlainText("Describe it")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    assert window.composer.generating and window.status.state == "generating"  # at once
    qtbot.waitUntil(holding.is_set, timeout=SIGNAL_TIMEOUT_MS)
    # Something else on the engine's thread ended (a preparation, an API request).
    window.engine.worker.state.emit("ready")
    assert window.composer.send_button.text() == "Stop" and window.status.state != "ready"
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS):
        window.asking.stop()
    qtbot.waitUntil(lambda: window.status.state == "ready", timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.send_button.text() == "Send"


# --- items 5 and 7: blank answers, per-answer figures --------------------------------------


def test_a_blank_answer_says_the_model_returned_no_text(qtbot):
    from desktop.gui.widgets.messages import NO_TEXT, AssistantMessage

    stats = AnswerStats(ttft_s=0.1, tokens_per_s=10.0, generated_tokens=3)
    answer = AssistantMessage()
    qtbot.addWidget(answer)
    answer.append("\n\n")
    answer.finish(Answer("\n\n\n", "stop", stats))
    assert NO_TEXT in answer.view.plain_text()
    assert "3 tokens" in answer.meta.text()
    reopened = AssistantMessage("\n\n", streaming=False)  # from the history
    qtbot.addWidget(reopened)
    assert NO_TEXT in reopened.view.plain_text() and reopened.meta.text() == ""
    stopped = AssistantMessage()
    qtbot.addWidget(stopped)
    stopped.finish(Answer("", "stopped", stats))
    assert "Stopped before any text" in stopped.view.plain_text()


def test_the_drafted_figure_is_each_answers_own(qtbot, launch, tiny_ir, sample_image):
    from desktop.core.reading_summary import answer_summary
    from desktop.gui.workers.engine_worker import AskResult

    drafted = AnswerStats(ttft_s=0.2, tokens_per_s=9.0, generated_tokens=40)
    drafted.drafted_tokens, drafted.accepted_tokens = 30, 21
    assert answer_summary(drafted).endswith(" · 21/30 drafted tokens accepted")  # in the card

    window = launch(model_dir=tiny_ir)
    status = window.status.stats_label
    first = send(qtbot, window, "What is in the picture?", [sample_image])
    assert first.answer.ok and status.full_text().startswith("TTFT")
    shown = window.chat.last_answer().meta.text()
    assert shown == answer_summary(first.answer.stats)
    # A failed answer leaves no older figure standing.
    failed = AskResult(first.request, Answer("", "error", error="The model failed."), first.prompt)
    window.engine.worker.finished.emit(failed)
    qtbot.waitUntil(lambda: status.full_text() == "", timeout=SIGNAL_TIMEOUT_MS)
    second = send(qtbot, window, "Again, please?")
    assert second.answer.ok and status.full_text().startswith("TTFT")
    window.sidebar.select(None)  # another chat: the speed line was this one's
    assert status.full_text() == ""


# --- item 8: a second `desklens` -----------------------------------------------------------


def test_a_second_launch_hands_over_its_files_and_prints_one_line(
    qtbot, launch, tmp_path, monkeypatch, capsys
):
    from desktop.cli import gui_cmd
    from desktop.core.ocr.service import ping

    monkeypatch.setenv("DESKLENS_DATA_DIR", str(tmp_path / "data"))  # the window's folder
    window = launch()
    qtbot.waitUntil(lambda: ping() == os.getpid(), timeout=SIGNAL_TIMEOUT_MS)
    shot = save_png(text_image("Order 7731"), tmp_path / "order.png")
    capsys.readouterr()
    args = argparse.Namespace(files=[shot], data_dir=None, model=None)
    assert gui_cmd.run(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["DeskLens is already open: 1 file attached there, and its window brought "
                     "forward."]  # fmt: skip
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert gui_cmd.run(argparse.Namespace(files=[], data_dir=None, model=None)) == 0
    assert capsys.readouterr().out.splitlines() == [
        "DeskLens is already open: its window was brought to the front."
    ]
    assert len(window.composer.chips()) == 1  # nothing more was attached


# --- item 9: a QR link without a browser ---------------------------------------------------


def test_a_code_link_with_no_browser_says_so_and_copies_it(qtbot, monkeypatch):
    from desktop.gui.widgets import code_links
    from desktop.gui.widgets.basics import text_label

    opened: list[str] = []
    monkeypatch.setattr(code_links, "_open_url", lambda url: opened.append(url.toString()) or False)
    holder = QWidget()
    qtbot.addWidget(holder)
    column = QVBoxLayout(holder)
    label = text_label("Order 7731\nQR: https://example.org/track?id=7731")
    column.addWidget(label)
    column.addWidget(text_label("below"))
    code_links.link_codes(label)
    holder.show()
    label.linkActivated.emit("https://example.org/track?id=7731")
    assert opened == ["https://example.org/track?id=7731"]
    note = code_links.no_browser_note(label)
    assert note is not None
    assert note.isVisible() and "No web browser could be opened" in note.text()
    assert column.indexOf(note) == column.indexOf(label) + 1  # right under the link
    assert QApplication.clipboard().text() == "https://example.org/track?id=7731"

    monkeypatch.setattr(code_links, "_open_url", lambda url: True)  # a browser opened it
    assert code_links.open_link(label, "https://example.org/")


def test_settings_say_which_model_was_given_with_model(qtbot, launch, tiny_ir, monkeypatch):
    from desktop.gui.panels.settings_dialog import SettingsDialog

    window = launch(model_dir=tiny_ir)
    shown: list[str] = []
    monkeypatch.setattr(
        SettingsDialog, "exec", lambda self: shown.append(self.model_edit.placeholderText()) or 0
    )
    window.open_settings()
    assert shown == [f"{tiny_ir} (given with --model)"]
    window.apply_settings(replace(window.settings))  # unchanged: nothing reloads


# --- item 10: the app starts where it was left ----------------------------------------------


def test_the_app_starts_on_the_last_chat_unless_files_are_given(qtbot, launch, tmp_path):
    from desktop.core.history import HistoryStore
    from desktop.gui.app import HISTORY_FOLDER
    from desktop.gui.flows.rewinding import UNANSWERED_TEXT

    data = tmp_path / "data"
    with HistoryStore(data / HISTORY_FOLDER) as store:
        older = store.create_conversation("Older")
        store.add_message(older, "user", "First question")
        latest = store.create_conversation("Latest")
        store.add_message(latest, "user", "What is the total?")
    window = launch(data_dir=data)
    assert window.conversation_id == latest
    assert window.title_label.full_text() == "Latest"
    # Its question was never answered (stored alone, as after a crash): Retry is offered.
    assert [m.text() for m in window.chat.messages()] == ["What is the total?", UNANSWERED_TEXT]
    window.close()

    shot = save_png(text_image("Order 7731"), tmp_path / "order.png")
    opened = launch(data_dir=data, files=[shot])  # "Open with": a chat of their own
    assert opened.conversation_id is None
    qtbot.waitUntil(lambda: len(opened.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)


def test_a_menu_button_does_not_stay_pressed_after_its_menu_closes(qtbot, launch):
    from PySide6.QtCore import QEvent

    window = launch()
    window.resize(1400, 900)
    window.move(300, 300)  # the pointer (at the screen's corner) is not over the buttons
    settle()
    for button in (window.exporting.button, window.composer.ask_menu_button):
        # As after a click: the button is hovered when its menu opens, and the menu takes
        # the mouse, so no Leave reaches the button.
        QApplication.sendEvent(button, QEvent(QEvent.Type.Enter))
        button.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, True)
        button.menu().aboutToHide.emit()
        qtbot.waitUntil(lambda b=button: not b.underMouse(), timeout=2000)
