"""`desklens ocr PATH...`: fast text extraction from images, folders and PDFs.

One file prints its text on stdout; several files (or a folder) are written into --out, one
output per input, and/or into one --combined file, with progress on stderr. --format csv
prints (or writes) the tables only; xlsx (a sheet per table) and pdf (a searchable PDF) are
files: written into --out, or sent to stdout when it is redirected.

One file is read by a warm DeskLens OCR service when one is running (`desklens serve`, or the
open app): this module then imports nothing heavy and the text comes back in the time the
reading takes. Everything else runs in-process (`ocr_local`).
"""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

from desktop.cli.common import add_model_options, add_threads_option, fail, threads_error
from desktop.cli.ocr_reply import print_reply
from desktop.core.file_types import is_image_or_pdf
from desktop.core.ocr.formats import OutputFormat
from desktop.core.ocr.service import OcrRequest, ask_service


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ocr",
        help="extract text from images, folders and PDFs",
        description="Extract text from images, folders and PDFs with the fast OCR engine. "
        "One file prints its text; several need --out and/or --combined.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="image files, PDFs or folders")
    parser.add_argument(
        "--format",
        type=format_argument,
        default=OutputFormat.TEXT,
        metavar="{" + ",".join(str(fmt) for fmt in OutputFormat) + "}",
        help="output format (default: text); csv and xlsx hold the tables, pdf is the input "
        "made searchable",
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="write one output per input here")
    parser.add_argument(
        "--combined",
        type=Path,
        metavar="FILE",
        help="write all inputs into one file (.txt/.md/.json/.xlsx)",
    )
    add_threads_option(parser)
    parser.add_argument(
        "--refine",
        action="store_true",
        help="one image: have the vision-language model rewrite it as Markdown (slower)",
    )
    parser.add_argument(
        "--no-service",
        action="store_true",
        help="read in this process even when a warm OCR service (`desklens serve`) is running",
    )
    add_model_options(parser, threads=False)
    parser.set_defaults(run=run)


def format_argument(name: str) -> OutputFormat:
    """--format, parsed once: argparse reports a bad one as a usage error (exit code 2)."""
    try:
        return OutputFormat.parse(name)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    if (error := threads_error(args)) is not None:
        return fail(error)
    if _servable(args):
        path = Path(args.paths[0])
        reply = ask_service(OcrRequest(os.path.abspath(path), args.format.value))
        if reply is not None:
            return print_reply(reply, path.name, args.format)
    from desktop.cli import ocr_local  # OpenVINO, OpenCV, numpy: only when reading here

    return ocr_local.run(args)


def _servable(args: argparse.Namespace) -> bool:
    """One readable file to print, with nothing asked that only this process can do."""
    if args.no_service or args.refine or args.out or args.combined or args.threads:
        return False
    if args.format.binary:  # a file's bytes: made here, not sent through the service
        return False
    if len(args.paths) != 1:
        return False
    path = Path(args.paths[0])
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # missing, a name too long, no permission: this process says which
        return False
    return regular and is_image_or_pdf(path)
