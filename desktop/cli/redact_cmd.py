"""`desklens redact IMAGE... [--out FILE]`: fill the e-mail addresses, IBANs, card numbers,
phone numbers and the user's own patterns on pages, and say what was done (issue 49). A PDF is
redacted page by page into a new PDF of the filled pages (`privacy/redact_pdf.py`).

Never silent: a page with nothing to redact says what the OCR read, a page it could not read
says that, and a page on which the OCR still reads a filled item fails (exit 1) with nothing
written. The input is never overwritten unless `--in-place` asks for it. Several images are
read by one OCR engine, each saved beside it as NAME.redacted.png (.pdf for a PDF); each says
what was done, one that fails does not stop the others, and the exit status is the most
serious of theirs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.cli import exit_codes
from desktop.cli.common import (
    CliError,
    add_threads_option,
    fail,
    page_progress,
    threads_error,
)
from desktop.core import paths
from desktop.core.terminal_text import terminal_text

if TYPE_CHECKING:  # the OCR stack loads only once the arguments are checked
    from desktop.core.ocr import OcrEngine
    from desktop.core.privacy.patterns import UserPattern
    from desktop.core.privacy.redact import Redaction
    from desktop.core.privacy.redact_pdf import PdfRedaction


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "redact",
        help="fill e-mails, IBANs, card and phone numbers on images and PDFs",
        description="Find e-mail addresses, IBANs, payment card numbers, phone numbers and "
        "your own patterns on images and PDFs with the OCR, fill their boxes and save the "
        "results; the OCR reads the result again to check that none of them is left. A PDF "
        "becomes a new PDF of its filled pages as images, with the remaining text searchable: "
        "nothing else of the original (text layer, links, forms, metadata) is kept.",
    )
    parser.add_argument(
        "images",
        nargs="+",
        type=Path,
        metavar="IMAGE",
        help="the images (PNG, JPEG, …) and PDFs to redact",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="the redacted copy when one IMAGE is given (PNG, WebP, TIFF or BMP; a PDF for "
        "a PDF; default: each IMAGE's name with .redacted.png, or .redacted.pdf)",
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
    from desktop.core.ocr import OcrEngine
    from desktop.core.privacy.patterns import PatternError

    problem = threads_error(args)
    if problem is not None:
        raise problem
    targets = _targets(args)
    try:
        patterns = _patterns(args)
    except PatternError as exc:
        raise CliError(str(exc), exit_codes.USAGE) from None
    engine, several = OcrEngine(threads=args.threads), len(args.images) > 1
    codes, reports = [], []
    for image, target in zip(args.images, targets, strict=True):
        try:
            redaction = _redact(image, engine, patterns)
            failed = redaction.outcome in ("leaked", "unreadable", "unproven")
            if not failed:
                _save(redaction, target)
        except CliError as exc:
            if not several:
                raise
            codes.append(fail(exc))  # the next image is still redacted
            reports.append({"source": image.name, "outcome": "error", "error": str(exc)})
            continue
        reports.append(_report(args, redaction, target, image.name if several else ""))
        codes.append(exit_codes.FAILED if failed else exit_codes.OK)
    if args.json:
        print(json.dumps(reports if several else reports[0], ensure_ascii=False, indent=2))
    return max(codes)


def _targets(args: argparse.Namespace) -> list[Path]:
    """Where each image's redacted copy goes; a usage error for an output that is lossy, or
    would be written over an input (its own only with --in-place) or another's output."""
    images: list[Path] = args.images
    if args.out is not None and len(images) > 1:
        raise CliError(
            "--out names one file: give it one IMAGE, or leave it out to save each image's "
            "copy beside it as NAME.redacted.png",
            exit_codes.USAGE,
        )
    targets = [args.out or _default_target(image) for image in images]
    _check_kind(images[0], targets[0])
    inputs = {image.resolve(): image for image in images}
    if targets[0].resolve() == images[0].resolve() and not args.in_place:
        raise CliError(
            f"--out is the input image itself; add --in-place to replace "
            f"{images[0].name} with its redacted copy",
            exit_codes.USAGE,
        )
    written: dict[Path, Path] = {}  # each copy, and the image it is of
    sources: set[Path] = set()
    for image, target in zip(images, targets, strict=True):
        source, where = image.resolve(), target.resolve()
        if source in sources:
            raise CliError(f"{image.name} is given twice", exit_codes.USAGE)
        sources.add(source)
        over = inputs.get(where) if where != source else None
        if over is not None or where in written:
            clash = f"the input {over.name}" if over else f"{written[where].name}'s copy"
            raise CliError(
                f"{image.name}'s copy, {target.name}, would be written over {clash}; "
                "redact them one at a time with --out",
                exit_codes.USAGE,
            )
        written[where] = image
    return targets


def _is_pdf(path: Path) -> bool:
    return path.suffix.lower() == ".pdf"


def _pages(image: Path) -> int:
    """Pages of a multi-page TIFF, frames of an animation (1 for other images and PDFs)."""
    from desktop.core.images import frame_count

    return 1 if _is_pdf(image) else frame_count(image)


def _default_target(image: Path) -> Path:
    suffix = "pdf" if _is_pdf(image) else "tif" if _pages(image) > 1 else "png"
    return image.with_name(f"{image.stem}.redacted.{suffix}")


def _check_kind(image: Path, target: Path) -> None:
    """A PDF's copy is a PDF; a multi-page TIFF's or an animation's a TIFF (its every page
    or frame); an image's a lossless image (a usage error otherwise)."""
    from desktop.core.privacy.redact import image_format

    pages = _pages(image)
    if pages > 1 and target.suffix.lower() not in (".tif", ".tiff"):
        what = "pages" if image.suffix.lower() in (".tif", ".tiff") else "frames"
        raise CliError(
            f"Cannot write {target.name}: {image.name} has {pages} {what}, which only a TIFF "
            "holds here (each redacted, none dropped); give --out a .tif name.",
            exit_codes.USAGE,
        )
    if _is_pdf(image) or _is_pdf(target):
        if not (_is_pdf(image) and _is_pdf(target)):
            what = "a PDF's redacted copy is a PDF" if _is_pdf(image) else "an image's is an image"
            raise CliError(f"Cannot write {target.name}: {what}.", exit_codes.USAGE)
        return
    try:
        image_format(target)
    except ValueError as exc:
        raise CliError(str(exc), exit_codes.USAGE) from None


def _patterns(args: argparse.Namespace) -> tuple[UserPattern, ...]:
    from desktop.core.privacy.patterns import compile_patterns
    from desktop.core.privacy.user_patterns import read_patterns

    saved = () if args.no_saved_patterns else read_patterns(args.data_dir or paths.user_data_dir())
    return compile_patterns([*saved, *args.pattern])


def _redact(
    image: Path, engine: OcrEngine, patterns: tuple[UserPattern, ...]
) -> Redaction | PdfRedaction:
    from desktop.core.images import ImageError, load_frames
    from desktop.core.privacy.redact import redact_page
    from desktop.core.privacy.redact_frames import redact_frames
    from desktop.core.privacy.redact_pdf import redact_pdf

    try:
        if _is_pdf(image):
            return redact_pdf(engine, image, patterns, page_progress())
        frames = load_frames(image)
        if len(frames) > 1:  # a multi-page TIFF, an animation: every page or frame
            return redact_frames(engine.extract, frames, patterns, page_progress())
        return redact_page(engine.extract, frames[0], patterns)
    except ImageError as exc:
        raise CliError(str(exc), exit_codes.INPUT_PROBLEM) from None


def _report(
    args: argparse.Namespace, redaction: Redaction | PdfRedaction, target: Path, name: str
) -> dict:
    """Says what was done (led by the image's `name` when there are several); the JSON
    report for --json."""
    shown = terminal_text(str(target), lines=False)
    summary = redaction.summary(shown if redaction.outcome == "redacted" else "")
    if redaction.outcome == "clean":
        kept = (
            "its pages as images (without its text layer, links or metadata)"
            if _is_pdf(target)
            else "an unchanged copy (without the file's metadata)"
        )
        summary += f" Saved {kept} → {shown}."
    warning = redaction.warning()
    lead = f"{terminal_text(name, lines=False)}: " if name else ""
    quiet = args.text or args.json  # stdout holds the text or the JSON: the sentences go aside
    print(lead + summary, file=sys.stderr if quiet else sys.stdout)
    if warning:
        print(f"desklens: warning: {lead}{warning}", file=sys.stderr)
    data = {
        "source": redaction.source_name,
        "outcome": redaction.outcome,
        "summary": redaction.summary(),
        **redaction.report(),
    }
    if args.text:
        data["text"] = redaction.text()
    if args.text and not args.json and redaction.outcome not in ("leaked", "unproven"):
        if name:
            print(f"==> {terminal_text(name, lines=False)} <==")
        print(terminal_text(redaction.text()))
    return data


def _save(redaction: Redaction | PdfRedaction, target: Path) -> None:
    from desktop.core.atomic import WriteError
    from desktop.core.privacy.redact import save_image
    from desktop.core.privacy.redact_frames import save_frames
    from desktop.core.privacy.redact_pdf import PdfRedaction, save_pdf

    try:
        if isinstance(redaction, PdfRedaction) and redaction.images:
            save_frames(redaction, target)
        elif isinstance(redaction, PdfRedaction):
            save_pdf(redaction, target)
        else:
            save_image(redaction.image, target)
    except (WriteError, OSError) as exc:
        raise CliError(str(exc), exit_codes.INPUT_PROBLEM) from None
