"""The app's Local API over its own EngineWorker: the engine thread runs the API's requests,
behind the user's questions, and stopping leaves the worker as it was (offscreen Qt)."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import openai
import pytest
from api_support import user_message
from gui_support import SIGNAL_TIMEOUT_MS

pytestmark = pytest.mark.gui


@pytest.fixture
def controller(qtbot, tmp_path, tiny_ir):
    from desktop.core.history import HistoryStore
    from desktop.gui.settings import EngineOptions
    from desktop.gui.workers.engine_worker import EngineController

    engine = EngineController(HistoryStore(tmp_path / "history"))
    with qtbot.waitSignal(engine.worker.loaded, timeout=SIGNAL_TIMEOUT_MS):
        engine.load(str(tiny_ir), EngineOptions("CPU", 256))
    yield engine
    assert engine.shutdown()
    engine.release()


@pytest.fixture
def local_api(controller, tmp_path):
    from desktop.core.api.server import ApiSettings
    from desktop.gui.workers.local_api import LocalApi

    api = LocalApi(controller, _no_ocr, tmp_path / "api.token", lambda write: write())
    assert api.start(ApiSettings(port=0)) is None
    yield api
    api.stop()


def _no_ocr():
    raise AssertionError("these tests use no OCR")


def _client(api):
    return openai.OpenAI(base_url=api.server.url, api_key=api.token(), max_retries=0, timeout=120)


def _ask_in_background(api, pool) -> Future:
    client = _client(api)
    return pool.submit(
        client.chat.completions.create,
        model="desklens",
        messages=[user_message("Hi")],
        max_tokens=4,
    )


def test_api_requests_run_on_the_engine_thread_with_its_engine(qtbot, controller, local_api):
    from PySide6.QtCore import QThread

    engine = controller.worker._engine
    threads: list = []
    original = engine.ask

    def recording_ask(*args, **kwargs):
        threads.append(QThread.currentThread())
        return original(*args, **kwargs)

    engine.ask = recording_ask
    try:
        with ThreadPoolExecutor(1) as pool:
            future = _ask_in_background(local_api, pool)
            qtbot.waitUntil(future.done, timeout=SIGNAL_TIMEOUT_MS)
    finally:
        del engine.ask
    assert future.result().usage.completion_tokens >= 1
    assert threads == [controller.thread]
    assert future.result().model == "desklens"
    models = _client(local_api).models.list().data
    assert models[0].id == engine.info.name


def test_api_requests_wait_while_a_question_of_the_user_is_pending(qtbot, controller, local_api):
    from desktop.core.chat import GenerationSettings
    from desktop.core.conversation import AskRequest, PrepareRequest

    jobs = local_api.server.backend.jobs
    engine = controller.worker._engine
    asked: list[str] = []
    original = engine.ask

    def recording_ask(conversation, question, *args, **kwargs):
        asked.append(question)
        return original(conversation, question, *args, **kwargs)

    engine.ask = recording_ask
    request = AskRequest("Mine first", settings=GenerationSettings(max_new_tokens=2))
    try:
        controller.worker.ask_sent()  # as EngineController.ask counts it, before queuing it
        with ThreadPoolExecutor(1) as pool:
            future = _ask_in_background(local_api, pool)
            qtbot.waitUntil(lambda: jobs.waiting == 1, timeout=SIGNAL_TIMEOUT_MS)
            # A round trip through the worker: the take its put asked for has been done.
            with qtbot.waitSignal(controller.prepared, timeout=SIGNAL_TIMEOUT_MS):
                controller.prepare(PrepareRequest(()))
            assert jobs.waiting == 1 and not future.done()  # the API did not go first
            cancel = threading.Event()
            controller._pending.append((request, cancel))
            controller._ask_requested.emit(request, cancel)  # the question's slot runs now
            qtbot.waitUntil(future.done, timeout=SIGNAL_TIMEOUT_MS)
    finally:
        del engine.ask
    assert asked == ["Mine first", "Hi"]  # then the API's, when the question's slot ended
    assert future.result().choices[0].finish_reason in ("stop", "length")
    qtbot.waitUntil(lambda: not controller.status.busy, timeout=SIGNAL_TIMEOUT_MS)


def test_stopping_refuses_waiting_requests_closes_the_port_and_keeps_the_worker(
    qtbot, controller, local_api
):
    jobs = local_api.server.backend.jobs
    port = local_api.server.port
    controller.worker.ask_sent()  # a question of the user's is on its way: the API waits
    with ThreadPoolExecutor(1) as pool:
        future = _ask_in_background(local_api, pool)
        qtbot.waitUntil(lambda: jobs.waiting == 1, timeout=SIGNAL_TIMEOUT_MS)
        local_api.stop()
        with pytest.raises(openai.InternalServerError):
            future.result(timeout=60)
    controller.worker._asks_sent -= 1  # the question that never came
    assert not local_api.running
    import socket

    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
    assert controller.worker._engine is not None  # the model stays loaded for the user


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_settings_row_shows_the_token_once_turned_on(qtbot, controller, tmp_path):
    from desktop.gui.panels.settings_dialog import SettingsDialog
    from desktop.gui.settings import AppSettings
    from desktop.gui.workers.local_api import LocalApi

    api = LocalApi(controller, _no_ocr, tmp_path / "api.token", lambda write: write())
    dialog = SettingsDialog(AppSettings(), [], None, api)
    qtbot.addWidget(dialog)
    row = dialog.api_row
    assert not row.check.isChecked() and row.token_edit.text() == ""
    assert not (tmp_path / "api.token").exists()  # off by default: no token made
    row.check.setChecked(True)
    assert row.token_edit.text() == (tmp_path / "api.token").read_text().strip()
    assert dialog.result_settings().local_api is True


def test_closing_the_app_stops_its_server_cleanly(qtbot, tmp_path, tiny_ir, monkeypatch):
    import socket

    from desktop.gui.app import create_app
    from desktop.gui.settings import AppSettings

    empty = tmp_path / "no-models"
    empty.mkdir()
    monkeypatch.setenv("DESKLENS_MODELS_DIR", str(empty))
    port = _free_port()
    settings = AppSettings(local_api=True, local_api_port=port)
    _app, window = create_app(data_dir=tmp_path / "data", model_dir=tiny_ir, settings=settings)
    try:
        qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
        api = window.local_api
        assert api.running and api.server.port == port
        with ThreadPoolExecutor(1) as pool:
            future = _ask_in_background(api, pool)
            qtbot.waitUntil(future.done, timeout=SIGNAL_TIMEOUT_MS)
        assert future.result().usage.completion_tokens >= 1
        assert (tmp_path / "data" / "api.token").is_file()
    finally:
        window.close()
    assert not window.local_api.running
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
