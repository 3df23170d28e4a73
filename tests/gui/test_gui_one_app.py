"""One app per data folder: a second `desklens gui --model M` or `--data-dir D` hands over to
the window already open there (it takes the files; another model is asked about there), or
ends within seconds with a sentence that says why. Never a second model in memory writing the
same history."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from child_log import ChildLog
from cli_runner import ROOT
from gui_support import SIGNAL_TIMEOUT_MS, save_png, text_image
from xserver import start_xvfb

from desktop.core.ocr.service import default_endpoint, hand_to_open_app, ping

ANSWERING = "answering the command line for the data folder"  # ocr_worker logs it
SECOND_LAUNCH_S = 30  # seconds: a Python start and one local exchange, on a busy machine


def test_a_second_model_launch_on_the_same_data_folder_leaves_one_window(
    tmp_path: Path, tiny_ir: Path
):
    server = start_xvfb((1024, 768))
    data = tmp_path / "data"
    env = {**server.env, "DESKLENS_MODELS_DIR": str(tmp_path / "no-models")}
    env.pop("DESKLENS_DATA_DIR", None)
    launch = [sys.executable, "-m", "desktop", "gui", "--data-dir", str(data)]
    first = subprocess.Popen(
        [*launch, "--model", str(tiny_ir)], stderr=subprocess.PIPE, encoding="utf-8",
        env=env, cwd=ROOT,
    )  # fmt: skip
    log = ChildLog(first, ANSWERING)
    try:
        assert log.wait(SIGNAL_TIMEOUT_MS / 1000), log.text()
        started = time.monotonic()
        second = subprocess.run(
            [*launch, "--model", str(tmp_path / "another-model")], capture_output=True,
            text=True, env=env, cwd=ROOT, timeout=SECOND_LAUNCH_S,
        )  # fmt: skip
        assert time.monotonic() - started < SECOND_LAUNCH_S
        assert second.returncode == 0, second.stderr
        assert "DeskLens is already open" in second.stdout
        assert "asks there whether to switch" in second.stdout
        windows = server.xdotool("search", "--onlyvisible", "--name", "DeskLens").split()
        assert len(windows) == 1  # the first app's, and no other
        assert first.poll() is None  # and it is still open
    finally:
        first.terminate()
        first.wait(120)
        server.stop()


def test_the_open_window_takes_the_files_and_asks_before_switching_model(
    qtbot, launch, tmp_path, tiny_ir
):
    from desktop.cli import main
    from desktop.gui.workers.engine_status import LocalModel

    window = launch(model_dir=tiny_ir)
    endpoint = default_endpoint(window.data_dir)
    qtbot.waitUntil(lambda: ping(endpoint) == os.getpid(), timeout=SIGNAL_TIMEOUT_MS)
    assert ping() is None  # the window answers its own data folder's command lines only

    shot = save_png(text_image("Invoice 8812"), tmp_path / "invoice.png")
    args = ["gui", "--data-dir", str(window.data_dir), "--model", str(tiny_ir), str(shot)]
    assert main(args) == 0  # handed over: no second app was started in this process
    qtbot.waitUntil(lambda: len(window.composer.chips()) == 1, timeout=SIGNAL_TIMEOUT_MS)
    assert not window.notice.isVisible()  # the same model: nothing to ask

    other = tmp_path / "other-model"
    assert hand_to_open_app([], endpoint, str(other))
    qtbot.waitUntil(window.notice.isVisible, timeout=SIGNAL_TIMEOUT_MS)
    assert f"--model {other}" in window.notice.label.text()
    assert "Switch to that model?" in window.notice.label.text()
    assert window.engine.status.source == LocalModel(str(tiny_ir))  # nothing loaded yet


def test_a_second_app_on_a_locked_data_folder_ends_with_a_sentence(tmp_path, capsys):
    from PySide6.QtCore import QLockFile

    from desktop.gui.app import run

    data = tmp_path / "data"
    data.mkdir()
    held = QLockFile(str(data / "app.lock"))  # an app that is still starting holds it
    assert held.tryLock(0)
    try:
        assert run(data_dir=data) == 1
    finally:
        held.unlock()
    error = capsys.readouterr().err
    assert f"DeskLens is already open on the data folder {data}" in error
    assert f"(process {os.getpid()})" in error
