"""`desklens ocr --out/--combined` when writing fails or the batch is stopped: every output is
whole or absent, the summary says what was written and why it stopped, the exit code says
which case it was."""

from __future__ import annotations

import errno
import json
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from limited import run_limited

from desktop.cli import exit_codes, main
from desktop.core import atomic
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.rendered_pages import render_lines

ROOT = Path(__file__).resolve().parents[2]
LINES = ["Invoice 4711 for the batch", "Total 12.50 EUR"]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {"DESKLENS_DATA_DIR": str(tmp_path_factory.mktemp("data"))}


def _inputs(folder: Path, count: int) -> Path:
    folder.mkdir()
    for n in range(count):
        render_lines([f"{LINES[0]} {n}", LINES[1]]).save(folder / f"page{n}.png")
    return folder


def _all_whole_json(out: Path) -> list[str]:
    names = sorted(path.name for path in out.iterdir())
    for name in names:
        assert json.loads((out / name).read_text())["source"].startswith("page")
    return names


def test_a_full_disk_mid_batch_stops_with_the_summary_and_no_truncated_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, out = _inputs(tmp_path / "in", 5), tmp_path / "out"
    # A first OCR builds the INT8 models and checks them on this CPU (the verdict is written
    # with an fsync of its own): done before the count, whichever test ran first.
    OcrEngine().warm_up()
    synced = []
    real_fsync = atomic.os.fsync

    def fsync_until_full(handle: int) -> None:
        synced.append(handle)
        if len(synced) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(handle)

    monkeypatch.setattr(atomic.os, "fsync", fsync_until_full)
    code = main(["ocr", str(folder), "--out", str(out), "--format", "json", "--threads", "2"])
    err = capsys.readouterr().err
    assert code == exit_codes.INPUT_PROBLEM
    assert "2 of 5 files read; 2 written to" in err  # the third was read, not written
    assert f"Could not write {out / 'page2.json'}: No space left on device." in err
    assert "Traceback" not in err
    assert _all_whole_json(out) == ["page0.json", "page1.json"]


def test_a_real_full_disk_leaves_only_whole_outputs(env: dict[str, str], tmp_path: Path) -> None:
    folder, out = _inputs(tmp_path / "in", 8), tmp_path / "out"
    out.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(out)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        run = run_limited("ocr", str(folder), "--out", str(out), "--format", "json", env=env)
        written = _all_whole_json(out)
    finally:
        subprocess.run(["umount", str(out)], check=True)
    assert run.returncode == exit_codes.INPUT_PROBLEM, run.stderr
    assert "No space left on device." in run.stderr and "Traceback" not in run.stderr
    assert f"files read; {len(written)} written to {out}" in run.stderr
    assert 0 < len(written) < 8


def test_an_unwritable_combined_file_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _inputs(tmp_path / "in", 2)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder should be")
    code = main(["ocr", str(folder), "--combined", str(blocker / "all.md"), "--threads", "2"])
    err = capsys.readouterr().err
    assert code == exit_codes.INPUT_PROBLEM
    assert f"Could not write {blocker / 'all.md'}: Not a directory." in err
    assert "2 of 2 files read" in err and "Traceback" not in err


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_batch_after_the_current_file_with_a_summary(
    env: dict[str, str], tmp_path: Path, number: int, code: int
) -> None:
    folder, out = _inputs(tmp_path / "in", 12), tmp_path / "out"
    batch = subprocess.Popen(
        [sys.executable, "-m", "desktop", "ocr", str(folder), "--out", str(out), "--format",
         "json"],
        stderr=subprocess.PIPE, encoding="utf-8", env={**os.environ, **env}, cwd=ROOT,
    )  # fmt: skip
    assert batch.stderr is not None
    log = []
    for line in batch.stderr:  # wait for the first file to be finished, then stop it
        log.append(line)
        if line.startswith("[1/12] ok"):
            batch.send_signal(number)
            break
    log.extend(batch.stderr)
    assert batch.wait(120) == code
    text = "".join(log)
    assert "stopped when asked (the file being read was not written)" in text
    assert "Traceback" not in text
    written = _all_whole_json(out)
    assert 1 <= len(written) < 12 and f"{len(written)} written to {out}" in text


def test_a_long_pdf_shows_its_pages_on_a_terminal(env: dict[str, str], tmp_path: Path) -> None:
    document = pdfium.PdfDocument.new()
    for _ in range(6):
        document.new_page(300, 200)
    document.save(tmp_path / "long.pdf")
    document.close()
    primary, secondary = pty.openpty()
    completed = subprocess.run(
        [sys.executable, "-m", "desktop", "ocr", "--no-service", str(tmp_path / "long.pdf")],
        stdout=subprocess.PIPE, stderr=secondary, env={**os.environ, **env}, cwd=ROOT,
        timeout=300,
    )  # fmt: skip
    os.close(secondary)
    shown = os.read(primary, 65536).decode()
    os.close(primary)
    assert completed.returncode == exit_codes.OK
    assert "page 1 of 6" in shown and "page 6 of 6" in shown
