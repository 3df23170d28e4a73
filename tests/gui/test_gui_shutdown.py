"""Stopping and closing at awkward moments: during the model load, during a conversion, with
an answer and an OCR batch running. Nothing may hang, and no thread or child process may
outlive the window. Thread and process counts are read from /proc (Linux, as in CI).

Tests hold the worker at a chosen point (an event it waits on) instead of sleeping, so "during
the load" really is during the load; timeouts are only hang guards.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from gui_support import SIGNAL_TIMEOUT_MS, hold_after_first_token, send, text_image
from PySide6.QtCore import Qt

from desktop.core.history import HistoryStore
from desktop.core.images import load_image
from desktop.core.model_registry import find_models
from desktop.core.paths import models_dir
from desktop.gui.app import HISTORY_FOLDER
from desktop.gui.image_ref import ImageRef
from desktop.gui.workers.engine_worker import EngineWorker

pytestmark = [
    pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux /proc"),
]

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = SIGNAL_TIMEOUT_MS / 1000
CONVERT_TIMEOUT_MS = 600_000


# --- /proc readers ------------------------------------------------------------------------


def native_threads() -> set[int]:
    return {int(task) for task in os.listdir("/proc/self/task")}


def python_threads() -> set[int]:
    """Python threads whose OS thread still runs (a finished QThread that once ran Python
    stays in threading.enumerate() as a stale _DummyThread)."""
    alive = native_threads()
    return {t.native_id for t in threading.enumerate() if t.native_id in alive}


def children(pid: int | None = None) -> set[int]:
    pid = pid or os.getpid()
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # the thread ended meanwhile
            found.update(int(c) for c in (task / "children").read_text().split())
    return found


def descendants(pid: int) -> set[int]:
    found = children(pid)
    for child in list(found):
        with contextlib.suppress(FileNotFoundError):  # the child ended meanwhile
            found |= descendants(child)
    return found


def running(pid: int) -> bool:
    """The process exists and is not a zombie waiting for its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- holding the model load ---------------------------------------------------------------


@dataclass
class LoadHold:
    """VLMEngine.load waits inside the worker until the GUI has asked the engine to stop."""

    loading: threading.Event = field(default_factory=threading.Event)
    stop_seen: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def held_load(monkeypatch) -> LoadHold:
    from desktop.core.engine import VLMEngine

    hold = LoadHold()
    original_load = VLMEngine.load.__func__
    original_stop = EngineWorker.stop_engine

    def load(cls, folder, config=None):
        hold.loading.set()
        hold.stop_seen.wait(WAIT_S)
        try:
            return original_load(cls, folder, config)
        finally:
            hold.finished.set()

    def stop_engine(self) -> None:
        hold.stop_seen.set()
        original_stop(self)

    monkeypatch.setattr(VLMEngine, "load", classmethod(load))
    monkeypatch.setattr(EngineWorker, "stop_engine", stop_engine)
    return hold


def stored(data_dir: Path) -> list[list[tuple[str, str, bool]]]:
    with HistoryStore(data_dir / HISTORY_FOLDER) as store:
        return [
            [(m.role, m.text, m.stopped) for m in store.messages(c.id)]
            for c in store.list_conversations()
        ]


# --- stop, new chat and close while the model loads ----------------------------------------


def test_stop_during_model_load_then_the_model_answers(qtbot, launch, tiny_ir, held_load):
    window = launch()
    window.load_model(str(tiny_ir))
    assert held_load.loading.wait(WAIT_S)
    window.engine.stop()  # nothing runs yet: must not deadlock, nor poison the next answer
    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    assert window.status.state == "ready"
    result = send(qtbot, window, "Are you there?")
    assert result.answer.ok, result.answer.error
    assert result.answer.finish_reason != "stopped"
    assert result.answer.stats.generated_tokens > 0


def ask_during_load(qtbot, launch, tiny_ir, held_load, question: str):
    """A window whose model load is held, with `question` sent (queued behind the load)."""
    window = launch()
    window.load_model(str(tiny_ir))
    assert held_load.loading.wait(WAIT_S)
    window.composer.editor.setPlainText(question)
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    return window


def test_question_queued_behind_the_load_is_stopped_cleanly(qtbot, launch, tiny_ir, held_load):
    window = ask_during_load(qtbot, launch, tiny_ir, held_load, "Queued while loading")
    assert window.engine.status.asking and window.composer.send_button.text() == "Stop"
    with qtbot.waitSignal(window.asking.answer_shown, timeout=SIGNAL_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0].answer.finish_reason == "stopped"
    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    assert stored(window.data_dir) == [
        [("user", "Queued while loading", False), ("assistant", "", True)]
    ]
    assert send(qtbot, window, "And now?").answer.ok  # the same conversation goes on


def test_new_chat_during_model_load_detaches_the_queued_question(qtbot, launch, tiny_ir, held_load):
    window = ask_during_load(qtbot, launch, tiny_ir, held_load, "Asked before the new chat")
    first = window.conversation_id
    window.sidebar.select(None)  # what "New chat" (Ctrl+N) does
    assert window.conversation_id is None and window.chat.messages() == []
    qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.waitUntil(lambda: not window.engine.status.asking, timeout=SIGNAL_TIMEOUT_MS)
    assert window.chat.messages() == []  # the stopped answer did not land in the new chat
    result = send(qtbot, window, "A fresh question")
    assert result.answer.ok and result.request.conversation_id != first
    assert stored(window.data_dir) == [
        [("user", "A fresh question", False), ("assistant", result.answer.text, False)],
        [("user", "Asked before the new chat", False), ("assistant", "", True)],
    ]


def test_closing_during_model_load_waits_for_it_and_exits(qtbot, launch, tiny_ir, held_load):
    window = launch()
    before = python_threads()
    window.load_model(str(tiny_ir))
    assert held_load.loading.wait(WAIT_S)
    window.composer.editor.setPlainText("Closed before the model was there")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)

    window.close()  # the load only goes on once the close asked the engine to stop

    assert held_load.stop_seen.is_set() and held_load.finished.is_set()
    assert window.engine.thread.isFinished() and window.ocr.thread.isFinished()
    qtbot.waitUntil(lambda: python_threads() <= before, timeout=SIGNAL_TIMEOUT_MS)
    # The question is either kept with a stopped (empty) answer or, never reached, not at all;
    # the history opens and holds no half-written message.
    [messages] = stored(window.data_dir) or [[]]
    assert messages in ([], [("user", "Closed before the model was there", False),
                             ("assistant", "", True)])  # fmt: skip


APP_SCRIPT = textwrap.dedent(
    """
    import sys
    from PySide6.QtCore import QObject, QTimer, Slot
    from desktop.gui.app import create_app
    from desktop.gui.image_ref import ImageRef
    from desktop.core.images import load_image
    from PIL import Image

    data_dir, model_dir, moment = sys.argv[1:4]
    app, window = create_app(data_dir=data_dir, model_dir=model_dir)

    class Driver(QObject):  # lives in the GUI thread: worker signals reach it queued
        @Slot(object)
        def busy(self, _info):
            # An answer and an OCR batch both running when the window closes.
            window.engine.worker.token.connect(self.close_window)
            pictures = [Image.new("RGB", (900, 700), (i, 255 - i, 90)) for i in range(0, 250, 10)]
            window.extraction.extract_text([ImageRef.of(load_image(p)) for p in pictures])
            window.asking.send_question("Tell me everything", [])

        closed = False

        @Slot(str)
        def close_window(self, _chunk):
            if self.closed:  # tokens queued before the first one closed the window
                return
            self.closed = True
            asking, jobs = window.engine.status.asking, len(window.ocr._jobs)
            print(f"closing: answering={asking} ocr_jobs={jobs}")
            window.close()

    driver = Driver()
    if moment == "loading":
        QTimer.singleShot(0, window.close)
    else:
        window.engine.worker.loaded.connect(driver.busy)
    code = app.exec()
    print("event loop ended", flush=True)
    del window
    sys.exit(code)
    """
)


@pytest.mark.parametrize("moment", ["loading", "answering"])
def test_the_app_process_exits_cleanly(tiny_ir, tmp_path, moment):
    """The real process, closed while the model loads or while it answers and reads text:
    the event loop ends, the interpreter exits with 0, nothing is printed as a crash."""
    script = tmp_path / "app.py"
    script.write_text(APP_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    env.pop("DESKLENS_MODEL", None)
    result = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "data"), str(tiny_ir), moment],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "event loop ended" in result.stdout
    if moment == "answering":
        assert "closing: answering=True ocr_jobs=1" in result.stdout
    for alarm in ("Traceback", "QThread: Destroyed", "Fatal Python error", "refcount"):
        assert alarm not in output, output


def test_signal_emit_keeps_bool_refcounts():
    """PySide6 6.12.0's Signal.emit() returned a borrowed True: every emitted token took one
    reference from True, and the app aborted ("bool_dealloc") after a few thousand tokens or
    at exit. pyproject excludes that release; this guards the installed one."""
    from PySide6.QtCore import QObject, Signal

    class Emitter(QObject):
        text = Signal(str)

    emitter = Emitter()
    emitter.text.connect(lambda _chunk: None)
    before = sys.getrefcount(True), sys.getrefcount(False)
    results = [emitter.text.emit("token") for _ in range(200)]
    del results
    assert (sys.getrefcount(True), sys.getrefcount(False)) == before


# --- closing during a conversion ------------------------------------------------------------


@pytest.mark.slow
def test_closing_during_a_conversion_ends_the_converter(qtbot, launch, tiny_checkpoint):
    window = launch()
    panel = window.first_run
    models = models_dir(window.data_dir)
    before = children()
    panel.start(str(tiny_checkpoint))
    assert panel.process is not None
    qtbot.waitUntil(lambda: panel.process.processId() != 0, timeout=SIGNAL_TIMEOUT_MS)
    pid = panel.process.processId()
    # Wait until it exports into its staging folder: the moment a half model exists.
    qtbot.waitUntil(lambda: any(models.glob(".desklens-tmp-*")), timeout=CONVERT_TIMEOUT_MS)
    assert panel.running and running(pid)
    family = {pid} | descendants(pid)

    window.close()

    assert not any(running(p) for p in family), family
    assert children() == before
    assert list(models.iterdir()) == []  # no staging folder and no half model, hidden or not
    assert find_models([models]) == []
    assert window.engine.thread.isFinished() and window.ocr.thread.isFinished()


def test_a_models_folder_that_cannot_be_created_is_explained(qtbot, launch, tiny_ir, tmp_path):
    """A write failure root cannot bypass: a file where the models folder should be."""
    data = tmp_path / "data"
    data.mkdir()
    models_dir(data).write_text("not a folder")
    window = launch(data_dir=data)
    panel = window.first_run
    panel.start(str(tiny_ir))
    assert not panel.running
    assert panel.result_label.isVisible()
    assert panel.result_label.text().startswith(
        f"Cannot create the models folder {models_dir(data)}"
    )
    assert panel.form.isEnabled()


# --- threads and child processes after closing ---------------------------------------------


def _busy_window_closed(qtbot, launch, tiny_ir, data_dir: Path) -> None:
    """Opens the app, starts an answer and an OCR batch, and closes it while both run."""
    window = launch(data_dir=data_dir, model_dir=tiny_ir)
    holding = hold_after_first_token(window)
    window.composer.editor.setPlainText("Write a very long answer")
    qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return)
    assert holding.wait(WAIT_S)

    reading = threading.Event()

    def hold_batch(job, done: int, total: int) -> None:  # in the OCR thread, after an image
        if done < total and not reading.is_set():
            reading.set()
            job.cancel.wait(WAIT_S)

    window.ocr.worker.progress.connect(hold_batch, Qt.ConnectionType.DirectConnection)
    refs = [ImageRef.of(load_image(text_image(f"Page {n}"))) for n in range(4)]
    window.extraction.extract_text(refs)
    assert reading.wait(WAIT_S)

    window.close()

    assert window.engine.thread.isFinished() and window.ocr.thread.isFinished()
    # Both were stopped, not lost: the question, its partial answer, the one page read.
    [messages] = stored(data_dir)
    assert sorted((role, stopped) for role, _, stopped in messages) == [
        ("assistant", True), ("ocr", False), ("user", False)
    ]  # fmt: skip


def test_closing_mid_answer_and_mid_ocr_leaves_no_thread_or_child(qtbot, launch, tiny_ir, tmp_path):
    # OpenVINO keeps a process-wide thread pool once it has run: a first round creates it,
    # and the counts after it are the baseline a second round must come back to.
    python_before = python_threads()
    child_before = children()
    _busy_window_closed(qtbot, launch, tiny_ir, tmp_path / "first")
    qtbot.waitUntil(lambda: python_threads() == python_before, timeout=SIGNAL_TIMEOUT_MS)
    native_after_first = len(native_threads())

    _busy_window_closed(qtbot, launch, tiny_ir, tmp_path / "second")

    # The OCR recognizer threads and every other Python thread are gone again ...
    qtbot.waitUntil(lambda: python_threads() == python_before, timeout=SIGNAL_TIMEOUT_MS)
    # ... no native thread stayed behind for this window (a leak grows by round) ...
    qtbot.waitUntil(lambda: len(native_threads()) <= native_after_first, timeout=SIGNAL_TIMEOUT_MS)
    # ... and no process was started and left behind.
    assert children() == child_before
