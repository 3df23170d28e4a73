"""Output files are whole and go where asked: each is read back as its format before it is put
in place; a FIFO, /dev/stdout or a link is written through, never replaced by a regular file; a
folder is refused with a sentence; a searchable PDF with no text to add is its input unchanged;
sheet names and cells lose what XML cannot hold; a batch stopped by a signal counts the files
that are on disk."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from openpyxl import load_workbook
from pypdf import PdfReader, PdfWriter

from desktop.core import atomic
from desktop.core.atomic import WriteError
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.batch import BatchProgress, run_batch
from desktop.core.ocr.export import write_combined, write_file
from desktop.core.ocr.formats import OutputFormat, check_pdf
from desktop.core.ocr.models import OcrDocument, OcrResult, OcrTable
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.ocr.searchable_pdf import write_searchable

HOSTILE = "bad\x1b]0;pwned\x07\x1b[2J\u202efdp.exe\x00\x0b\ufffe"


def document(name: str, cell: str = "12.50") -> OcrDocument:
    table = OcrTable((("Item", "Price"), (f"Tea{HOSTILE}", cell)), (0, 0, 10, 10), ruled=True)
    page = OcrResult(lines=[], width=10, height=10, seconds=0.0, source_name=name, tables=[table])
    return OcrDocument(source_name=name, pages=[page])


def read_fifo(fifo: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with fifo.open("rb") as reader:
            into.append(reader.read())

    thread = threading.Thread(target=read)
    thread.start()
    return thread


@pytest.mark.parametrize("suffix", [".json", ".txt", ".md", ".xlsx"])
def test_a_fifo_target_is_written_through_and_stays_a_fifo(tmp_path: Path, suffix: str) -> None:
    fifo = tmp_path / f"all{suffix}"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = read_fifo(fifo, received)
    write_combined([document("a.png"), document("b.png")], fifo)
    reader.join(timeout=30)
    assert not reader.is_alive()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    if suffix == ".xlsx":
        assert len(load_workbook(io.BytesIO(received[0])).sheetnames) == 2
    else:
        assert b"a.png" in received[0] and b"b.png" in received[0]
    assert [p.name for p in tmp_path.iterdir()] == [fifo.name]  # no temporary left beside it


def test_a_link_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    real.write_text("old")
    link.symlink_to(real)
    write_combined([document("a.png")], link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert '"source": "a.png"' in real.read_text()
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "made" / "by_link.md")
    write_combined([document("a.png")], dangling)
    assert dangling.is_symlink() and "a.png" in (tmp_path / "made" / "by_link.md").read_text()


@pytest.mark.parametrize("redirect", ["pipe", "file", "appended file"])
def test_dev_stdout_is_written_through(tmp_path: Path, redirect: str) -> None:
    script = (
        "import sys; from desktop.core.ocr.export import write_file; from pathlib import Path;"
        "from desktop.core.ocr.formats import OutputFormat;"
        "print('before', flush=True);"
        "write_file(Path('/dev/stdout'), '{\"a\": 1}', OutputFormat.JSON)"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    out = tmp_path / "out.json"
    out.write_bytes(b"earlier\n" if redirect == "appended file" else b"")
    with out.open("ab") as file:  # `>>`; for a fresh empty file the same as `>`
        stdout = subprocess.PIPE if redirect == "pipe" else file
        run = subprocess.run([sys.executable, "-c", script], stdout=stdout, env=env, timeout=60,
                             stderr=subprocess.PIPE)  # fmt: skip
    assert run.returncode == 0, run.stderr
    written = run.stdout if redirect == "pipe" else out.read_bytes()
    earlier = b"earlier\n" if redirect == "appended file" else b""
    assert written == earlier + b'before\n{"a": 1}\n'  # nothing before it overwritten
    assert os.path.exists("/dev/stdout")


def test_a_folder_target_is_refused_with_a_sentence(tmp_path: Path) -> None:
    folder = tmp_path / "all.json"
    folder.mkdir()
    with pytest.raises(WriteError, match=r"Could not write .*all\.json: it is a folder\."):
        write_combined([document("a.png")], folder)
    assert folder.is_dir()


def test_a_file_that_does_not_read_back_is_not_put_in_place(tmp_path: Path) -> None:
    target = tmp_path / "out.pdf"
    target.write_bytes(b"the previous file")
    with pytest.raises(WriteError, match="did not read back whole"):
        atomic.write_output(target, lambda file: file.write(b"%PDF-1.4\nxref\n"), check_pdf)
    assert target.read_bytes() == b"the previous file"
    with pytest.raises(WriteError, match="did not read back whole"):
        write_file(tmp_path / "broken.json", "{not json", OutputFormat.JSON)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.pdf"]  # no temporaries


def test_control_characters_leave_sheet_names_and_cells(tmp_path: Path) -> None:
    out = tmp_path / "all.xlsx"
    names = [f"scan{HOSTILE}.png", "\x1b\x07", f"{HOSTILE}{HOSTILE}{HOSTILE}.png"]
    write_combined([document(name, cell=f"1{HOSTILE}") for name in names], out)
    workbook = load_workbook(out)
    for sheet in workbook.worksheets:
        assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in sheet.title), sheet.title
        assert sheet["A2"].value == "Tea" + "bad]0;pwned[2J\u202efdp.exe"
    assert len(workbook.sheetnames) == 3


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return OcrEngine(threads=2)


def blank_pdf(path: Path, pages: int, inches: float = 8.5) -> Path:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=inches * 72, height=11 * 72)
    writer.write(path)
    return path


@pytest.mark.parametrize("case", ["blank", "5 blank", "wide blank", "white scan"])
def test_a_pdf_with_no_text_to_add_is_written_unchanged(
    engine: OcrEngine, tmp_path: Path, case: str
) -> None:
    source = tmp_path / "in.pdf"
    if case == "white scan":  # pages that are images of nothing
        render_lines([], width=600, height=800).save(source, "PDF", resolution=72, save_all=True,
                                                      append_images=[render_lines([])])  # fmt: skip
    else:
        blank_pdf(source, 5 if case == "5 blank" else 1, 60.0 if case == "wide blank" else 8.5)
    out = tmp_path / "out.pdf"
    made = write_searchable(engine, source, out)
    assert made.written and out.read_bytes() == source.read_bytes()
    assert len(PdfReader(out, strict=True).pages) == len(made.document.pages)


def test_a_batch_stopped_after_a_file_was_written_counts_it(
    engine: OcrEngine, tmp_path: Path
) -> None:
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    for number in (1, 2, 3):
        render_lines([f"Receipt {number}"], width=300, height=80).save(inputs / f"r{number}.png")
    stop = threading.Event()

    def on_progress(progress: BatchProgress) -> None:
        if progress.status == "reading" and progress.path.name == "r2.png":
            stop.set()  # as a signal would, while r2's PDF is being made

    report = run_batch(engine, [inputs], out_dir=out, fmt=OutputFormat.PDF, on_progress=on_progress,
                       cancel=stop)  # fmt: skip
    on_disk = sorted(p.name for p in out.iterdir())
    assert on_disk == ["r1.pdf", "r2.pdf"]
    assert report.written == len(on_disk) and report.cancelled
