"""Settings > Model > A server, in the real app: DeskLens's own `serve --api` on loopback serving
the tiny model (or a stand-in that misbehaves on purpose) is chosen through the Settings
dialog, questions stream from it, the window says where answers come from, failures keep the
question and offer this computer's model, and nothing leaves the computer unasked."""

from __future__ import annotations

import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import openai
import pytest
from gui_support import SIGNAL_TIMEOUT_MS, send, text_image
from misbehaving_server import MODEL, StandInServer
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QMessageBox, QToolButton
from served_model import serve_model

from desktop.core.remote import config as remote_config
from desktop.core.remote import engine as remote_engine
from desktop.gui.panels.settings_dialog import SettingsDialog
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.widgets.messages import (
    CUT_SHORT,
    AssistantMessage,
    ErrorMessage,
    NoteMessage,
    UserMessage,
)

KEY_NAME = "server.key"


def source_of(meta: str) -> str:
    """The meta line's part that says where an answer came from: it leads, after the
    length-limit note when the tiny model (random weights, which differ with the CPU torch
    drew them on) talks to the limit."""
    parts = meta.split(" · ")
    return parts[1] if parts[0] == CUT_SHORT and len(parts) > 1 else parts[0]


@pytest.fixture(scope="module")
def served(tiny_ir, tmp_path_factory):
    """The tiny model behind DeskLens's API on 127.0.0.1: the "server" of these tests."""
    from desktop.core.engine import VLMEngine

    running = serve_model(VLMEngine.load(tiny_ir), tmp_path_factory.mktemp("server-data"))
    yield running
    running.stop()


def settings_dialog(qtbot, monkeypatch, window, fill, consent: bool = True) -> tuple:
    """Opens Settings from the window, lets `fill(dialog)` set it as a user would, presses
    OK and waits for its checks; returns (dialog, the consent questions asked)."""
    asked: list[str] = []

    def question(_parent, _title, text, *_args):
        asked.append(text)
        return QMessageBox.StandardButton.Yes if consent else QMessageBox.StandardButton.Cancel

    opened: list[SettingsDialog] = []

    def run(dialog: SettingsDialog) -> int:
        opened.append(dialog)
        dialog.show()
        fill(dialog)
        ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
        qtbot.mouseClick(ok, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: not dialog.source.busy, timeout=SIGNAL_TIMEOUT_MS)
        if dialog.isVisible():  # not accepted: the user gives up
            dialog.reject()
        return dialog.result()

    with monkeypatch.context() as patch:
        patch.setattr(QMessageBox, "question", question)
        patch.setattr(SettingsDialog, "exec", run)
        window.open_settings()
    return opened[0], asked


def choose_server(url: str, key: str = "", model: str = ""):
    def fill(dialog: SettingsDialog) -> None:
        rows = dialog.source
        rows.server_radio.click()
        for edit, text in ((rows.url_edit, url), (rows.key_edit, key), (rows.model_edit, model)):
            edit.clear()
            edit.insert(text)

    return fill


def choose_this_computer(dialog: SettingsDialog) -> None:
    dialog.source.local_radio.click()


def record_saves(monkeypatch) -> list[str]:
    """The thread of every save of the server's address and key."""
    threads: list[str] = []
    original = remote_config.save

    def save(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(remote_config, "save", save)
    return threads


def record_requests(monkeypatch) -> list[list[dict]]:
    """The messages of every chat request the remote engine sends."""
    sent: list[list[dict]] = []
    original = remote_engine.chat_messages

    def chat_messages(*args, **kwargs):
        sent.append(original(*args, **kwargs))
        return sent[-1]

    monkeypatch.setattr(remote_engine, "chat_messages", chat_messages)
    return sent


def wait_for_server(qtbot, window, host: str) -> None:
    loaded = lambda: window.engine.status.server == host and window.model_loaded  # noqa: E731
    qtbot.waitUntil(loaded, timeout=SIGNAL_TIMEOUT_MS)


def host_of(server: StandInServer) -> str:
    return server.url.split("/")[2]


def notice_action(window) -> QToolButton | None:
    button = window.notice.action_button
    return button if window.notice.isVisible() and button.isVisibleTo(window.notice) else None


def send_as_is(qtbot, window, question: str, images) -> object:
    """`send` of a chat's first pictures to a server: the redaction offer (issue 49) answered
    "Send as is" (the chat's later pictures are not offered again)."""
    from desktop.core.images import load_image
    from desktop.gui.flows.redacting import offer_buttons
    from desktop.gui.image_ref import ImageRef

    window.composer.add_images([ImageRef.of(load_image(image)) for image in images])
    window.composer.editor.setPlainText(question)
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.redacting.offer_box is not None)
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        offer_buttons(window.redacting.offer_box)["Send as is"].click()
    return blocker.args[0]


def test_a_server_answers_in_the_window_then_this_computer_again(
    qtbot, launch, tiny_ir, served, monkeypatch, tmp_path
):
    saves = record_saves(monkeypatch)
    requests = record_requests(monkeypatch)
    window = launch(model_dir=tiny_ir)
    name = window.engine.status.model.name
    assert window.engine.status.server == ""

    # Test connection, from the dialog, off the GUI thread; then OK: asked once, switched.
    def test_then_choose(dialog: SettingsDialog) -> None:
        choose_server(served.url, served.key)(dialog)
        rows = dialog.source
        qtbot.mouseClick(rows.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: rows.test_button.isEnabled(), timeout=SIGNAL_TIMEOUT_MS)
        assert rows.result_label.text() == f"Connected: 2 models ({name}, desklens-ocr)"

    dialog, asked = settings_dialog(qtbot, monkeypatch, window, test_then_choose)
    assert dialog.result() and len(asked) == 1
    assert served.host in asked[0] and "leave this computer" in asked[0] and "OCR" in asked[0]
    wait_for_server(qtbot, window, served.host)
    assert window.status.model_label.full_text() == f"{name} · server {served.host}"
    assert not window.first_run_holder.isVisible()

    # A question: its words stream into the bubble, which says where they came from.
    chunks: list[str] = []
    window.engine.token.connect(chunks.append)
    first = send_as_is(qtbot, window, "What does the screenshot say?", [text_image("Invoice 2291")])
    assert first.answer.ok and first.answer.stats.server == served.host
    answer = window.chat.last_answer()
    assert isinstance(answer, AssistantMessage)
    assert len(chunks) > 1 and "".join(chunks) == answer.text() == first.answer.text
    assert source_of(answer.meta.text()) == f"from server {served.host}"
    assert answer.meta.text().startswith(CUT_SHORT) == (first.answer.finish_reason == "length")
    assert "image tokens" not in answer.meta.text()
    assert window.status.stats_label.full_text().endswith(f"from {served.host}")

    # Nothing is read ahead (the server reads the images when the question comes).
    prepared: list = []
    window.engine.prepared.connect(prepared.append)
    window.composer.add_images([first.request.images[0]])
    qtbot.waitUntil(lambda: window.preparing.settled, timeout=SIGNAL_TIMEOUT_MS)
    assert window.composer.hint == "" and prepared == []
    window.composer.clear_images()

    # A follow-up: the server is sent the conversation so far.
    second = send(qtbot, window, "And the total?")
    assert second.answer.ok and second.answer.stats.server == served.host
    assert [m["role"] for m in requests[-1]] == ["user", "assistant", "user"]
    assert requests[-1][1]["content"] == first.answer.text

    # The key: in server.key (this user only), never in settings.ini; saved off the GUI thread.
    data = window.data_dir
    assert stat.S_IMODE((data / KEY_NAME).stat().st_mode) == 0o600
    assert (data / KEY_NAME).read_text().strip() == served.key
    ini = (data / "settings.ini").read_text()
    assert served.key not in ini and "model_source=server" in ini
    assert saves and threading.main_thread().name not in saves

    # Back to this computer: its model loads again and answers.
    dialog, asked = settings_dialog(qtbot, monkeypatch, window, choose_this_computer)
    assert dialog.result() and asked == []
    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    assert window.engine.status.server == "" and window.status.model_label.full_text() == name
    local = send(qtbot, window, "Once more, here?")
    assert local.answer.ok and local.answer.stats.server == ""
    assert not window.chat.last_answer().meta.text().startswith("from server")
    assert SettingsStore(data).load().model_source == "local"


def test_the_server_is_used_again_at_start_and_its_answers_stay_marked(
    qtbot, launch, tiny_ir, served, monkeypatch, tmp_path
):
    data = tmp_path / "data"
    window = launch(data_dir=data, model_dir=tiny_ir)
    settings_dialog(qtbot, monkeypatch, window, choose_server(served.url, served.key))
    wait_for_server(qtbot, window, served.host)
    send(qtbot, window, "What is it?")
    window.close()

    again = launch(data_dir=data, wait_model=False)  # no model here: the server's is used
    wait_for_server(qtbot, again, served.host)
    assert not again.first_run_holder.isVisible()
    answer = again.chat.last_answer()  # the chat reopened from the history
    assert answer is not None and source_of(answer.meta.text()) == f"from server {served.host}"
    # Its follow-up sends the stored turn back (the server keeps nothing between requests).
    requests = record_requests(monkeypatch)
    assert send(qtbot, again, "And then?").answer.ok
    assert [m["role"] for m in requests[-1]] == ["user", "assistant", "user"]
    assert requests[-1][1]["content"] == answer.text()

    # While the window uses the server, its Local API serves no model: nothing is relayed.
    again.apply_settings(replace(again.settings, local_api=True, local_api_port=0))
    assert again.local_api.running
    client = openai.OpenAI(
        base_url=again.local_api.server.url, api_key=again.local_api.token(), max_retries=0
    )
    with ThreadPoolExecutor(1) as pool:  # the window's event loop hands the request over
        future = pool.submit(
            client.chat.completions.create,
            model="desklens",
            messages=[{"role": "user", "content": "Hi"}],
            max_tokens=4,
        )
        qtbot.waitUntil(future.done, timeout=SIGNAL_TIMEOUT_MS)
    refused = future.exception()
    assert isinstance(refused, openai.APIStatusError) and refused.status_code == 503
    assert "No model is loaded" in str(refused)
    assert [m.id for m in client.models.list()] == ["desklens-ocr"]


def test_a_wrong_key_says_so_and_offers_this_computers_model(
    qtbot, launch, tiny_ir, served, monkeypatch, caplog
):
    window = launch(model_dir=tiny_ir)
    wrong = "sk-not-the-key-0123456789"
    settings_dialog(qtbot, monkeypatch, window, choose_server(served.url, wrong))
    qtbot.waitUntil(lambda: window.status.state == "error", timeout=SIGNAL_TIMEOUT_MS)
    sentence = (
        f"The server at {served.host} refused the key (401). Check the server key "
        "(Settings > Model, or DESKLENS_SERVER_KEY)."
    )
    assert window.status.model_label.full_text() == sentence
    assert window.notice.text() == sentence and notice_action(window) is not None
    assert notice_action(window).text() == "Use this computer's model"
    assert not window.first_run_holder.isVisible() and not window.model_loaded

    # A question meanwhile: the sentence, the question kept, Retry.
    result = send(qtbot, window, "What is it?")
    assert result.answer.error == sentence
    error = window.chat.messages()[-1]
    assert isinstance(error, ErrorMessage) and error.text() == sentence
    assert isinstance(window.chat.messages()[-2], UserMessage)

    # One click and this computer's model answers; Retry asks it the same question.
    qtbot.mouseClick(notice_action(window), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    assert window.engine.status.server == "" and window.settings.model_source == "local"
    retry = next(b for b in error.findChildren(QToolButton) if b.text() == "Retry")
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as shown:
        qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
    assert shown.args[0].answer.ok and shown.args[0].request.question == "What is it?"
    assert wrong not in caplog.text


def test_a_busy_server_keeps_the_question_and_retry_asks_again(
    qtbot, launch, monkeypatch, tmp_path
):
    """No model on this computer: the first-run panel gives way to the server; a refusal
    (429) is an error bubble with Retry; a stream cut midway keeps its words."""
    window = launch()
    assert window.first_run_holder.isVisible()
    with StandInServer("429") as server:
        settings_dialog(qtbot, monkeypatch, window, choose_server(server.url, "k", MODEL))
        host = host_of(server)
        wait_for_server(qtbot, window, host)
        assert not window.first_run_holder.isVisible() and window.chat.isVisible()

        result = send_as_is(qtbot, window, "What is this?", [text_image("Order 7731")])
        busy = f"The server at {host} is busy (429): try again in 7 s."
        assert result.answer.error == busy
        error = window.chat.messages()[-1]
        assert isinstance(error, ErrorMessage) and error.text() == busy
        assert notice_action(window) is None  # no model here to offer

        server.mode = "cut"
        retry = next(b for b in error.findChildren(QToolButton) if b.text() == "Retry")
        with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as shown:
            qtbot.mouseClick(retry, Qt.MouseButton.LeftButton)
        again = shown.args[0]
        assert again.answer.text == "Hello wor" and again.answer.finish_reason == "stopped"
        assert window.chat.last_answer().text() == "Hello wor"
        assert isinstance(window.chat.messages()[-1], NoteMessage)
        assert [type(m) for m in window.chat.messages()].count(UserMessage) == 1


def test_declining_to_send_questions_to_a_server_changes_nothing(qtbot, launch, monkeypatch):
    window = launch()
    with StandInServer("429") as server:
        dialog, asked = settings_dialog(
            qtbot, monkeypatch, window, choose_server(server.url, "k"), consent=False
        )
        assert len(asked) == 1 and not dialog.result()
        host = host_of(server)
        assert dialog.source.result_label.text() == f"Not switched: nothing was sent to {host}."
        assert server.requests == []  # the address was checked here, the server never asked
    assert window.settings.model_source == "local" and window.settings.consented_servers == ""
    assert not (window.data_dir / "server.json").exists()
    assert not (window.data_dir / KEY_NAME).exists()
    assert window.engine.status.server == "" and window.first_run_holder.isVisible()


def test_an_address_that_cannot_be_used_keeps_the_dialog_open(qtbot, launch, monkeypatch):
    window = launch()
    dialog, asked = settings_dialog(qtbot, monkeypatch, window, choose_server("ftp://files"))
    assert not dialog.result() and asked == []
    assert dialog.source.result_label.text().startswith("'ftp://files' is not a server address")
    assert dialog.source.result_label.objectName() == "errorText"

    # Plain http to a public address: refused unless the user allows it, then asked.
    public = choose_server("http://93.184.216.34:8000/v1")
    dialog, asked = settings_dialog(qtbot, monkeypatch, window, public)
    assert not dialog.result() and "unencrypted" in dialog.source.result_label.text()

    def allowed(dialog: SettingsDialog) -> None:
        public(dialog)
        dialog.source.insecure_check.setChecked(True)

    dialog, asked = settings_dialog(qtbot, monkeypatch, window, allowed, consent=False)
    assert len(asked) == 1 and "93.184.216.34:8000" in asked[0] and not dialog.result()
    assert window.settings.model_source == "local"


def test_no_server_is_called_unless_one_is_chosen_and_agreed_to(
    qtbot, launch, tiny_ir, monkeypatch, tmp_path
):
    """A saved server whose use was not agreed to (or not chosen) is never called."""
    calls: list[str] = []
    monkeypatch.setattr(remote_engine, "list_models", lambda *a: calls.append("list") or [])
    monkeypatch.setattr(
        remote_engine.RemoteEngine, "connect", classmethod(lambda *a: calls.append("connect"))
    )
    data = tmp_path / "data"
    remote_config.save(data, remote_config.ServerConfig("http://127.0.0.1:9/v1", "sk-x"))
    SettingsStore(data).save(AppSettings(model_source="server"))  # hand-edited: no consent
    window = launch(data_dir=data, model_dir=tiny_ir)
    assert window.engine.status.server == ""
    assert send(qtbot, window, "What is it?").answer.ok
    settings_dialog(qtbot, monkeypatch, window, lambda dialog: None)  # OK on This computer
    assert calls == []


def test_a_server_that_refused_at_start_is_tried_again_at_the_next_question(
    qtbot, launch, monkeypatch
):
    window = launch()
    with StandInServer("401") as server:
        settings_dialog(qtbot, monkeypatch, window, choose_server(server.url, "old-key", MODEL))
        qtbot.waitUntil(lambda: window.status.state == "error", timeout=SIGNAL_TIMEOUT_MS)
        assert "(401)" in window.notice.text() and "text extraction still works" in (
            window.notice.text()
        )
        assert not window.first_run_holder.isVisible()
        server.mode = "cut"  # the key was renewed on the server's side, say: now it answers
        result = send(qtbot, window, "What is this?")
        assert result.answer.text == "Hello wor" and window.model_loaded
        assert window.status.model_label.full_text() == f"{MODEL} · server {host_of(server)}"


def test_the_first_run_panel_offers_a_server(qtbot, launch, monkeypatch):
    window = launch()
    shown: list[bool] = []
    monkeypatch.setattr(SettingsDialog, "exec", lambda d: shown.append(d.source.wants_server) or 0)
    qtbot.mouseClick(window.first_run.server_button, Qt.MouseButton.LeftButton)
    assert shown == [True] and window.settings.model_source == "local"
