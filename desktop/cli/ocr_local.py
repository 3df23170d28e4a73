"""`desklens ocr` in this process: one file printed, batches written, --refine streamed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop.cli import exit_codes
from desktop.cli.common import CliError, ctrl_c_stops, fail, load_engine, load_images, read_images
from desktop.cli.ocr_cmd import print_reply
from desktop.core.ocr.batch import BatchProgress, collect_inputs, read_one, run_batch
from desktop.core.ocr.engine import OcrEngine
from desktop.core.ocr.model_files import OcrModelError
from desktop.core.ocr.service import OcrRequest
from desktop.core.refine import refine_to_markdown


def run(args: argparse.Namespace) -> int:
    try:
        files, refused = collect_inputs(args.paths)
        _check_inputs(args, files, refused)
        if args.refine:
            return _refine_one(args, files)
        engine = OcrEngine(threads=args.threads)
        if len(files) == 1 and args.out is None and args.combined is None:
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
    sys.stdout.write(chunk)
    sys.stdout.flush()


def _check_inputs(args: argparse.Namespace, files: list[Path], refused: list[Path]) -> None:
    missing = [path for path in args.paths if not Path(path).exists()]
    if missing:
        raise CliError(f"not found: {', '.join(map(str, missing))}", exit_codes.INPUT_PROBLEM)
    given = {Path(path) for path in args.paths}
    explicit_refused = [path for path in refused if path in given]
    if explicit_refused:
        names = ", ".join(p.name for p in explicit_refused)
        raise CliError(f"not an image or PDF DeskLens can read: {names}", exit_codes.INPUT_PROBLEM)
    if not files:
        raise CliError(
            f"no images or PDFs found in {', '.join(args.paths)}", exit_codes.INPUT_PROBLEM
        )
    if len(files) > 1 and args.out is None and args.combined is None:
        raise CliError(
            f"{len(files)} files to read: give --out DIR for one output per file, "
            "and/or --combined FILE for a single file",
            exit_codes.USAGE,
        )


def _print_one(engine: OcrEngine, path: Path, fmt: str) -> int:
    return print_reply(read_one(engine, OcrRequest(str(path), fmt)))


def _run_batch(engine: OcrEngine, args: argparse.Namespace) -> int:
    report = run_batch(
        engine,
        args.paths,
        out_dir=args.out,
        fmt=args.format,
        combined=args.combined,
        on_progress=_print_progress,
    )
    for path in report.refused:
        print(f"skipped {path} (not an image or PDF)", file=sys.stderr)
    done = len(report.outcomes) - len(report.failed)
    where = [str(p) for p in (args.out, report.combined) if p is not None]
    print(
        f"{done} of {len(report.outcomes)} files read"
        + (f"; written to {' and '.join(where)}" if where and done else ""),
        file=sys.stderr,
    )
    return exit_codes.INPUT_PROBLEM if report.failed else exit_codes.OK


def _print_progress(progress: BatchProgress) -> None:
    if progress.status == "reading":
        return
    if progress.status == "failed":
        line = f"failed: {progress.message}"
    else:
        line = f"ok: {progress.path.name} ({progress.message})"
    print(f"[{progress.done}/{progress.total}] {line}", file=sys.stderr)
