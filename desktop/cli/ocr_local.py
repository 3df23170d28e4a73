"""`desklens ocr` in this process: one file printed, batches written, --refine streamed.

A batch stops cleanly on Ctrl+C or SIGTERM (after the file being read; a PDF between pages)
and on an output folder that cannot take files (full disk, read-only), and always ends with
the summary of what was written.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from desktop.cli import exit_codes
from desktop.cli.common import (
    CliError,
    ctrl_c_stops,
    fail,
    load_engine,
    load_images,
    page_progress,
    read_images,
)
from desktop.cli.ocr_reply import print_reply
from desktop.core.images import ImageError, path_problem
from desktop.core.ocr.batch import (
    BatchProgress,
    BatchReport,
    collect_inputs,
    printed_reply,
    run_batch,
)
from desktop.core.ocr.engine import OcrEngine
from desktop.core.ocr.export import combined_problem
from desktop.core.ocr.formats import OutputFormat
from desktop.core.ocr.model_files import OcrModelError
from desktop.core.ocr.produce import produce
from desktop.core.refine import refine_to_markdown
from desktop.core.terminal_text import terminal_text

_SIGNAL_EXIT: dict[int, int] = {
    signal.SIGINT: exit_codes.INTERRUPTED,
    signal.SIGTERM: exit_codes.TERMINATED,
}


def run(args: argparse.Namespace) -> int:
    try:
        files, refused = collect_inputs(args.paths)
        _check_inputs(args, files, refused)
        if args.refine:
            return _refine_one(args, files)
        engine = OcrEngine(threads=args.threads)
        if len(files) == 1 and args.out is None and args.combined is None:
            if args.format.binary:
                return _send_one(engine, files[0], args.format)
            return _print_one(engine, files[0], args.format)
        return _run_batch(engine, args)
    except CliError as exc:
        return fail(exc)
    except OcrModelError as exc:
        return fail(CliError(str(exc), exit_codes.MODEL_PROBLEM))


def _refine_one(args: argparse.Namespace, files: list[Path]) -> int:
    """The VLM's Markdown for one image, streamed to stdout."""
    if len(files) != 1 or files[0].suffix.lower() == ".pdf" or args.out or args.combined:
        raise CliError("--refine works on one image at a time (no PDF, --out or --combined)", 2)
    image = load_images([str(files[0])])[0]
    try:  # the fast OCR's own reading drafts the model's Markdown (faster, the same answer)
        ocr = read_images([image], args.threads)[0]
    except CliError:
        ocr = None
    engine = load_engine(args)
    with ctrl_c_stops(engine):
        answer = refine_to_markdown(engine, image, on_text=_write, ocr=ocr)
    if answer.error:
        raise CliError(answer.error, exit_codes.FAILED)
    _write("\n")
    return exit_codes.OK


def _write(chunk: str) -> None:
    sys.stdout.write(terminal_text(chunk))
    sys.stdout.flush()


def _check_inputs(args: argparse.Namespace, files: list[Path], refused: list[Path]) -> None:
    """Every path named on the command line must be readable (folders are expanded)."""
    problems = [
        problem
        for given in args.paths
        if (problem := path_problem(given, given, what="an image or PDF")) is not None
    ]
    if problems:
        raise CliError(" ".join(problems), exit_codes.INPUT_PROBLEM)
    given = {Path(path) for path in args.paths}
    explicit_refused = [path for path in refused if path in given]
    if explicit_refused:
        names = ", ".join(p.name for p in explicit_refused)
        raise CliError(f"not an image or PDF DeskLens can read: {names}", exit_codes.INPUT_PROBLEM)
    if not files:
        raise CliError(
            f"no images or PDFs found in {', '.join(args.paths)}", exit_codes.INPUT_PROBLEM
        )
    _check_format(args)
    if len(files) > 1 and args.out is None and args.combined is None:
        raise CliError(
            f"{len(files)} files to read: give --out DIR for one output per file, "
            "and/or --combined FILE for a single file",
            exit_codes.USAGE,
        )


def _check_format(args: argparse.Namespace) -> None:
    """--combined's extension is a format it can hold; a file format goes to a file."""
    if args.combined is not None and (problem := combined_problem(args.combined)) is not None:
        raise CliError(problem, exit_codes.USAGE)
    fmt: OutputFormat = args.format
    to_terminal = args.out is None and args.combined is None and sys.stdout.isatty()
    if fmt.binary and to_terminal:
        raise CliError(
            f"--format {fmt} makes a file: give --out DIR, or redirect stdout "
            f"(desklens ocr FILE --format {fmt} > out{fmt.suffix})",
            exit_codes.USAGE,
        )


def _print_one(engine: OcrEngine, path: Path, fmt: OutputFormat) -> int:
    # On a terminal, "page N of M" while a PDF is read (a long one takes minutes).
    on_page = page_progress()
    reply = printed_reply(engine, path, fmt, on_page=on_page)
    return print_reply(reply, path.name, fmt)


def _send_one(engine: OcrEngine, path: Path, fmt: OutputFormat) -> int:
    """A file format (xlsx, pdf) of one input on stdout, which is not a terminal."""
    on_page = page_progress()
    try:
        data = produce(fmt, engine, path, on_page=on_page).data
    except ImageError as exc:
        raise CliError(str(exc), exit_codes.INPUT_PROBLEM) from exc
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    return exit_codes.OK


def _run_batch(engine: OcrEngine, args: argparse.Namespace) -> int:
    with _stopped_by_signals() as stop:
        report = run_batch(
            engine,
            args.paths,
            out_dir=args.out,
            fmt=args.format,
            combined=args.combined,
            on_progress=_print_progress,
            cancel=stop.event,
        )
    for path in report.refused:
        print(f"skipped {terminal_text(str(path), lines=False)} (not an image or PDF)",
              file=sys.stderr)  # fmt: skip
    print(terminal_text(_summary(report, args)), file=sys.stderr)
    if report.write_error is not None:
        return fail(CliError(report.write_error, exit_codes.INPUT_PROBLEM))
    if stop.signal is not None:
        return _SIGNAL_EXIT[stop.signal]
    return exit_codes.INPUT_PROBLEM if report.failed else exit_codes.OK


def _summary(report: BatchReport, args: argparse.Namespace) -> str:
    """ "12 of 40 files read; written to out/ and all.md", plus why it stopped early."""
    done = len(report.outcomes) - len(report.failed)
    line = f"{done} of {report.total} files read"
    where = [str(p) for p in (args.out, report.combined) if p is not None]
    if where and report.written:
        line += f"; {report.written} written to {' and '.join(where)}"
    if report.write_error is not None:
        line += f"; stopped: {report.write_error}"
    elif report.cancelled:
        line += "; stopped when asked (the file being read was not written)"
    return line


class _Stop:
    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal: int | None = None

    def __call__(self, number: int, _frame: object) -> None:
        self.signal = number
        self.event.set()
        signal.signal(number, signal.SIG_DFL)  # a second Ctrl+C ends it at once


@contextmanager
def _stopped_by_signals() -> Iterator[_Stop]:
    """Ctrl+C and SIGTERM set the batch's cancel event instead of killing it mid-file."""
    stop = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {number: signal.signal(number, stop) for number in _SIGNAL_EXIT}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _print_progress(progress: BatchProgress) -> None:
    if progress.status == "reading":
        return
    if progress.status == "failed":
        line = f"failed: {progress.message}"
    else:
        line = f"ok: {progress.path.name} ({progress.message})"
    print(f"[{progress.done}/{progress.total}] {terminal_text(line)}", file=sys.stderr)
