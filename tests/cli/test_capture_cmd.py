"""`desklens capture` and the service's capture request: the open window takes the request
(and the command imports nothing heavy and exits); `desklens serve` or no service at all
leaves the capture to the command itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from desktop.cli import exit_codes, main
from desktop.core.ocr.service import (
    OcrReply,
    OcrRequest,
    OcrService,
    ask_open_app_to_capture,
)

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("PySide6", "cv2", "openvino", "numpy")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(folder))
    return folder


def refuse(request: OcrRequest, _stopping: threading.Event) -> OcrReply:
    raise AssertionError(f"a capture request is no OCR request: {request}")


def serving(**options: object) -> OcrService:
    service = OcrService(refuse, **options)
    service.start()
    return service


def test_the_open_window_takes_the_capture_with_its_mode(data_dir: Path) -> None:
    modes: list[str] = []
    service = serving(on_capture=modes.append)
    try:
        assert ask_open_app_to_capture("ask")
        assert ask_open_app_to_capture()
    finally:
        service.stop()
    assert modes == ["ask", ""]


def test_nothing_or_desklens_serve_leaves_the_capture_to_the_command(data_dir: Path) -> None:
    assert not ask_open_app_to_capture("copy")  # no service
    service = serving()  # `desklens serve`: no window to capture with
    try:
        assert not ask_open_app_to_capture("copy")
    finally:
        service.stop()


def test_a_closing_window_refuses_and_the_service_goes_on(data_dir: Path) -> None:
    def closing(_mode: str) -> None:
        raise RuntimeError("the window is closing")

    service = serving(on_capture=closing)
    try:
        assert not ask_open_app_to_capture("copy")
        assert service.running
    finally:
        service.stop()


def test_the_handed_off_command_imports_nothing_heavy(data_dir: Path) -> None:
    service = serving(on_capture=lambda _mode: None)
    probe = (
        "import json, sys\n"
        "from desktop.cli import main\n"
        "code = main(['capture', '--copy'])\n"
        f"print(json.dumps([code, [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", probe], env={**os.environ}, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
    finally:
        service.stop()
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [exit_codes.OK, []]


def test_a_negative_hold_is_a_usage_error(data_dir: Path, capsys) -> None:
    assert main(["capture", "--hold", "-1"]) == exit_codes.USAGE
    assert "--hold must be 0 or more" in capsys.readouterr().err


def test_copy_and_ask_exclude_each_other(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["capture", "--copy", "--ask"])
    assert exited.value.code == exit_codes.USAGE
    assert "not allowed with" in capsys.readouterr().err
