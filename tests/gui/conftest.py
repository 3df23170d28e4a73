"""The GUI layer's tests: every test here drives the real Qt app (offscreen unless DISPLAY and
QT_QPA_PLATFORM say otherwise) and is marked `gui`."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from gui_support import SIGNAL_TIMEOUT_MS


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.gui)


@pytest.fixture
def isolated_env(monkeypatch, tmp_path):
    """No model is found unless a test passes one; nothing is read from the user's folders."""
    empty = tmp_path / "no-models"
    empty.mkdir()
    monkeypatch.setenv("DESKLENS_MODELS_DIR", str(empty))
    monkeypatch.delenv("DESKLENS_MODEL", raising=False)
    monkeypatch.delenv("DESKLENS_DATA_DIR", raising=False)
    return tmp_path


@pytest.fixture
def launch(qtbot, isolated_env):
    """launch(data_dir=None, model_dir=None, wait_model=True, files=()) -> MainWindow. Every
    window is closed at the end of the test, and its worker threads must have finished."""
    from desktop.gui.app import create_app

    windows = []

    def start(
        data_dir: Path | None = None, model_dir: Path | None = None, wait_model=True, files=()
    ):
        folder = data_dir or isolated_env / "data"
        _app, window = create_app(data_dir=folder, model_dir=model_dir, files=files)
        windows.append(window)
        if model_dir is not None and wait_model:
            qtbot.waitUntil(lambda: window.model_loaded, timeout=SIGNAL_TIMEOUT_MS)
        return window

    yield start
    for window in windows:
        window.close()
        assert window.engine.thread.isFinished()
        assert window.ocr.thread.isFinished()


@pytest.fixture(scope="module")
def private_bus() -> Iterator[str]:
    """A D-Bus session bus of the tests' own (the portal and global-shortcut fakes serve on it)."""
    if shutil.which("dbus-daemon") is None:
        pytest.fail("dbus-daemon is not installed (scripts/dev.sh system_deps adds it)")
    daemon = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert daemon.stdout is not None
    address = daemon.stdout.readline().strip()  # printed once the bus accepts connections
    yield address
    daemon.terminate()
    daemon.wait(timeout=30)
