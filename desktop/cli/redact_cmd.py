"""`desklens redact IMAGE --out FILE`: fill the e-mail addresses, IBANs, card numbers, phone
numbers and the user's own patterns on a page, and say what was done (issue 49).

Never silent: a page with nothing to redact says what the OCR read, a page it could not read
says that, and a page on which the OCR still reads a filled item fails (exit 1) with nothing
written. The input is never overwritten unless `--in-place` asks for it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.cli import exit_codes
from desktop.cli.common import CliError, add_threads_option, fail, threads_error
from desktop.core import paths
from desktop.core.terminal_text import terminal_text

if TYPE_CHECKING:  # the OCR stack loads only once the arguments are checked
    from desktop.core.privacy.patterns import UserPattern
    from desktop.core.privacy.redact import Redaction


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "redact",
        help="fill e-mails, IBANs, card and phone numbers on an image",
        description="Find e-mail addresses, IBANs, payment card numbers, phone numbers and "
        "your own patterns on an image with the OCR, fill their boxes and save the result; "
        "the OCR reads the result again to check that none of them is left.",
    )
    parser.add_argument("image", type=Path, help="the image to redact (PNG, JPEG, WebP, …)")
    parser.add_argument(
        "--out",
        type=Path,
        help="the redacted image (PNG, WebP, TIFF or BMP; "
        "default: IMAGE's name with .redacted.png)",
    )
    parser.add_argument(
        "--text",
        action="store_true",
        help="print the OCR text with each item replaced by a tag ([email])",
    )
    parser.add_argument(
        "--json", action="store_true", help="print what was found (kinds, places, boxes) as JSON"
    )
    parser.add_argument(
        "--pattern",
        action="append",
        default=[],
        metavar="REGEX",
        help="also redact what this regular expression matches (repeatable)",
    )
    parser.add_argument(
        "--no-saved-patterns",
        action="store_true",
        help="leave out the patterns saved in the app's Settings",
    )
    parser.add_argument("--in-place", action="store_true", help="allow --out to be IMAGE itself")
    parser.add_argument("--data-dir", type=Path, help="the DeskLens data folder")
    add_threads_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from desktop.core.ocr.model_files import OcrModelError

    try:
        return _run(args)
    except CliError as exc:
        return fail(exc)
    except OcrModelError as exc:
        return fail(CliError(str(exc), exit_codes.MODEL_PROBLEM))


def _run(args: argparse.Namespace) -> int:
    from desktop.core.privacy.patterns import PatternError

    problem = threads_error(args)
    if problem is not None:
        raise problem
    target = _target(args)
    try:
        patterns = _patterns(args)
    except PatternError as exc:
        raise CliError(str(exc), exit_codes.USAGE) from None
    redaction = _redact(args, patterns)
    if redaction.outcome in ("leaked", "unreadable"):
        _report(args, redaction, target)
        return exit_codes.FAILED
    _save(redaction, target)
    _report(args, redaction, target)
    return exit_codes.OK


def _target(args: argparse.Namespace) -> Path:
    from desktop.core.privacy.redact import image_format

    target = args.out or args.image.with_name(f"{args.image.stem}.redacted.png")
    try:
        image_format(target)
    except ValueError as exc:
        raise CliError(str(exc), exit_codes.USAGE) from None
    if not args.in_place and target.resolve() == args.image.resolve():
        raise CliError(
            f"--out is the input image itself; add --in-place to replace "
            f"{args.image.name} with its redacted copy",
            exit_codes.USAGE,
        )
    return target


def _patterns(args: argparse.Namespace) -> tuple[UserPattern, ...]:
    from desktop.core.privacy.patterns import compile_patterns
    from desktop.core.privacy.user_patterns import read_patterns

    saved = () if args.no_saved_patterns else read_patterns(args.data_dir or paths.user_data_dir())
    return compile_patterns([*saved, *args.pattern])


def _redact(args: argparse.Namespace, patterns: tuple[UserPattern, ...]) -> Redaction:
    from desktop.core.images import ImageError, load_image
    from desktop.core.ocr import OcrEngine
    from desktop.core.privacy.redact import redact_page

    if args.image.suffix.lower() == ".pdf":
        raise CliError(
            f"{args.image.name} is a PDF: redact takes one image (export the page as a PNG first)",
            exit_codes.INPUT_PROBLEM,
        )
    try:
        image = load_image(args.image)
        return redact_page(OcrEngine(threads=args.threads).extract, image, patterns)
    except ImageError as exc:
        raise CliError(str(exc), exit_codes.INPUT_PROBLEM) from None


def _report(args: argparse.Namespace, redaction: Redaction, target: Path) -> None:
    shown = terminal_text(str(target), lines=False)
    summary = redaction.summary(shown if redaction.outcome == "redacted" else "")
    if redaction.outcome == "clean":
        summary += f" Saved an unchanged copy (without the file's metadata) → {shown}."
    warning = redaction.warning()
    quiet = args.text or args.json  # stdout holds the text or the JSON: the sentences go aside
    print(summary, file=sys.stderr if quiet else sys.stdout)
    if warning:
        print(f"desklens: warning: {warning}", file=sys.stderr)
    if args.json:
        data = {
            "source": redaction.source_name,
            "outcome": redaction.outcome,
            "summary": redaction.summary(),
            "spans": [s.to_json() for s in redaction.spans],
            "leaks": [s.to_json() for s in redaction.leaks],
        }
        if args.text:
            data["text"] = redaction.result.text()
        print(json.dumps(data, ensure_ascii=False, indent=2))
    elif args.text and redaction.outcome != "leaked":
        print(terminal_text(redaction.result.text()))


def _save(redaction: Redaction, target: Path) -> None:
    from desktop.core.atomic import WriteError
    from desktop.core.privacy.redact import save_image

    try:
        save_image(redaction.image, target)
    except (WriteError, OSError) as exc:
        raise CliError(str(exc), exit_codes.INPUT_PROBLEM) from None
