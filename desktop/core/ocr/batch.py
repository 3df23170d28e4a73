"""OCR of many files or folders: progress, cancellation, one outcome per file, exports.

A file that cannot be read is reported in its outcome and the batch goes on; a missing or
broken OCR model (OcrModelError) and an output folder that cannot take files (full disk,
read-only) stop it, since every further file would fail alike. Outputs are written whole or
not at all; a file cut short by `cancel` (a PDF stopped between pages) is not written.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from desktop.core.atomic import WriteError
from desktop.core.errors import describe
from desktop.core.images import ImageError, collect_image_files
from desktop.core.ocr.engine import OcrEngine
from desktop.core.ocr.export import write_combined
from desktop.core.ocr.formats import OutputFormat
from desktop.core.ocr.model_files import OcrModelError
from desktop.core.ocr.models import OcrDocument
from desktop.core.ocr.pdf import PageCallback
from desktop.core.ocr.produce import Produced, produce, read_document
from desktop.core.ocr.service import OcrReply, OcrRequest

Status = Literal["reading", "done", "failed"]


@dataclass(frozen=True)
class BatchProgress:
    done: int  # files finished so far (this one included once its status is final)
    total: int
    path: Path
    status: Status
    message: str = ""  # the error sentence for "failed"; a short summary for "done"


@dataclass
class FileOutcome:
    path: Path
    document: OcrDocument | None = None
    error: str | None = None  # user-facing sentence when the file could not be read
    seconds: float = 0.0
    outputs: list[Path] = field(default_factory=list)
    written: bool = False  # every output of this file is in place

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class BatchReport:
    outcomes: list[FileOutcome]
    refused: list[Path]  # files in the inputs that are neither images nor PDFs
    cancelled: bool = False
    combined: Path | None = None
    total: int = 0  # files found in the inputs (more than outcomes when stopped early)
    write_error: str | None = None  # why outputs stopped being written (the batch stopped)

    @property
    def failed(self) -> list[FileOutcome]:
        return [outcome for outcome in self.outcomes if not outcome.ok]

    @property
    def written(self) -> int:
        return sum(outcome.written for outcome in self.outcomes)


ProgressCallback = Callable[[BatchProgress], None]


def collect_inputs(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], list[Path]]:
    """(images and PDFs, refused files); folders are expanded, sorted."""
    return collect_image_files(paths, accept_pdf=True)


def read_one(
    engine: OcrEngine,
    request: OcrRequest,
    cancel: threading.Event | None = None,
    on_page: PageCallback | None = None,
) -> OcrReply:
    """The warm service's answer to `desklens ocr FILE` (its format named on the wire)."""
    try:
        fmt = OutputFormat.parse(request.format)
    except ValueError as exc:
        return OcrReply("input", error=str(exc))
    return printed_reply(engine, Path(request.path), fmt, cancel, on_page)


def printed_reply(
    engine: OcrEngine,
    path: Path,
    fmt: OutputFormat,
    cancel: threading.Event | None = None,
    on_page: PageCallback | None = None,
) -> OcrReply:
    """One file rendered as `desklens ocr FILE` prints it (in-process or served); a file or
    model problem becomes the reply's status and sentence."""
    if fmt.binary:  # a file's bytes are never printed (nor sent through the service)
        return OcrReply("input", error=f"--format {fmt} is written to a file: give --out DIR.")
    try:
        produced = produce(fmt, engine, path, cancel=cancel, on_page=on_page)
    except ImageError as exc:
        return OcrReply("input", error=str(exc))
    except OcrModelError as exc:
        return OcrReply("model", error=str(exc))
    return OcrReply("ok", output=produced.text)


def run_batch(
    engine: OcrEngine,
    paths: Iterable[str | os.PathLike],
    *,
    out_dir: Path | None = None,
    fmt: OutputFormat = OutputFormat.TEXT,
    combined: Path | None = None,
    on_progress: ProgressCallback | None = None,
    cancel: threading.Event | None = None,
) -> BatchReport:
    """Read every image and PDF under `paths`, writing outputs as each file finishes.

    `out_dir` receives `<name><suffix>` per file in `fmt` (`produce`: a CSV per table beside a
    text format's file; a searchable PDF written as its input is read); `combined` receives
    all documents in one file whose extension picks the format. Raises OcrModelError only;
    outputs that cannot be written end up in `report.write_error`.
    """
    files, refused = collect_inputs(paths)
    report = BatchReport(outcomes=[], refused=refused, total=len(files))
    stems = _unique_stems(files)
    cancelled = cancel.is_set if cancel is not None else lambda: False
    for index, path in enumerate(files):
        if cancelled():
            report.cancelled = True
            break
        _notify(on_progress, BatchProgress(index, len(files), path, "reading"))
        target = out_dir / f"{stems[index]}{fmt.suffix}" if out_dir is not None else None
        outcome = _read_one_safely(engine, path, fmt, target, cancel, report)
        if cancelled() and not outcome.written:
            report.cancelled = True  # this file may be cut short: neither counted nor written
            break
        report.outcomes.append(outcome)
        if target is None:  # read for --combined alone: done
            outcome.written = outcome.document is not None
        status: Status = "done" if outcome.ok else "failed"
        _notify(
            on_progress,
            BatchProgress(index + 1, len(files), path, status, outcome.error or _summary(outcome)),
        )
        if report.write_error is not None:
            break
        if cancelled():  # asked to stop as this file's outputs were put in place
            report.cancelled = True
            break
    _write_combined(report, combined)
    return report


def _write_combined(report: BatchReport, combined: Path | None) -> None:
    documents = [o.document for o in report.outcomes if o.document is not None and o.written]
    if combined is None or not documents:
        return
    try:
        report.combined = write_combined(documents, combined)
    except WriteError as exc:
        report.write_error = str(exc)


def _read_one_safely(
    engine: OcrEngine,
    path: Path,
    fmt: OutputFormat,
    target: Path | None,
    cancel: threading.Event | None,
    report: BatchReport,
) -> FileOutcome:
    """`_read_one`, an output that cannot be written reported in the file's outcome (and as
    the batch's `write_error` when the folder itself cannot take files)."""
    try:
        return _read_one(engine, path, fmt, target, cancel)
    except WriteError as exc:
        if exc.affects_folder:
            report.write_error = str(exc)
        return FileOutcome(path, error=str(exc))


def _read_one(
    engine: OcrEngine,
    path: Path,
    fmt: OutputFormat,
    target: Path | None,
    cancel: threading.Event | None,
) -> FileOutcome:
    """Reads the file; with `target`, writes its outputs there (not when cut short)."""
    started = time.perf_counter()
    try:
        if target is None:
            made = Produced(read_document(engine, path, cancel))
        else:
            made = produce(fmt, engine, path, target, cancel=cancel)
    except (OcrModelError, WriteError):
        raise
    except ImageError as exc:
        return FileOutcome(path, error=str(exc), seconds=time.perf_counter() - started)
    except Exception as exc:  # an OpenVINO failure on one odd file must not end the batch
        error = f'"{path.name}" could not be read: {describe(exc)}'
        return FileOutcome(path, error=error, seconds=time.perf_counter() - started)
    seconds = time.perf_counter() - started
    return FileOutcome(
        path, made.document, seconds=seconds, outputs=list(made.outputs), written=made.written
    )


def _summary(outcome: FileOutcome) -> str:
    assert outcome.document is not None
    pages = outcome.document.pages
    lines = sum(len(page.lines) for page in pages)
    where = f"{len(pages)} pages, " if len(pages) != 1 else ""
    return f"{where}{lines} lines in {outcome.seconds:.2f} s"


def _unique_stems(files: list[Path]) -> list[str]:
    """Output names per input: the file stem, numbered when two inputs share one."""
    used: set[str] = set()
    stems = []
    for path in files:
        stem, number = path.stem, 1
        while stem.casefold() in used:
            number += 1
            stem = f"{path.stem}-{number}"
        used.add(stem.casefold())
        stems.append(stem)
    return stems


def _notify(callback: ProgressCallback | None, progress: BatchProgress) -> None:
    if callback is not None:
        callback(progress)
