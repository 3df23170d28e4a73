"""`desklens ask`'s checks around an answer, from the fast OCR of its images: regions given on
the command line, the readability guard before the model reads, the evidence after."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from desktop.cli import exit_codes
from desktop.cli.common import CliError, read_images
from desktop.core.legibility import (
    MIN_READABLE_LINE_PX,
    Judged,
    NoTextFound,
    TextSize,
    judge,
    line_heights,
)
from desktop.core.regions import REGION_FORMAT, Region, RegionError, check_regions

if TYPE_CHECKING:
    from desktop.core.conversation.engine_protocol import AnswerEngine
    from desktop.core.engine.vision import VisionSpec
    from desktop.core.evidence import Evidence
    from desktop.core.images import LoadedImage
    from desktop.core.ocr.models import OcrResult


def add_check_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--region",
        action="append",
        default=[],
        metavar="X,Y,W,H",
        help=f"ask about this box of the image ({REGION_FORMAT}); repeatable. The model gets "
        "the box and the region itself at its own resolution",
    )
    parser.add_argument(
        "--no-checks",
        action="store_true",
        help="skip the fast OCR that warns of text too small to read and finds the answer's "
        "evidence (the lines it quotes, and figures not on the image)",
    )


def regions(args: argparse.Namespace, images: Sequence[LoadedImage]) -> tuple[Region, ...]:
    """--region boxes, checked against the images (a usage error says which and why)."""
    try:
        found = tuple(Region.parse(text) for text in args.region)
        check_regions(found, images)
    except RegionError as exc:
        raise CliError(str(exc), exit_codes.USAGE) from None
    return found


def ocr_results(args: argparse.Namespace, images: Sequence[LoadedImage]) -> list[OcrResult] | None:
    """The fast OCR of the images: needed by --ground (its failure fails the question), and by
    the checks (whose OCR failing only leaves them out)."""
    if not images or (args.no_checks and not args.ground):
        return None
    if args.ground:
        return read_images(images, args.threads)
    try:
        return read_images(images, args.threads)
    except (CliError, RuntimeError, ValueError):
        return None


def vision_spec(engine: AnswerEngine) -> VisionSpec | None:
    """This computer's engine's image budget; None for a server's (its resize is unknown)."""
    from desktop.core.engine.vision import VisionSpec

    spec = getattr(getattr(engine, "encoder", None), "spec", None)
    return spec if isinstance(spec, VisionSpec) else None


def text_sizes(
    results: Sequence[OcrResult] | None,
    images: Sequence[LoadedImage],
    asked: Sequence[Region],
    spec: VisionSpec | None,
) -> list[Judged]:
    """What the model will see of the text: of each image, or of each region when the question
    has regions (their crops are what it reads the text from); NoTextFound where the OCR
    found no line."""
    if results is None or spec is None:
        return []
    found: list[Judged] = []
    if asked:
        for number, region in enumerate(asked, start=1):
            image = images[region.image]
            heights = line_heights(results[region.image], region.corners)
            size = (region.width, region.height)
            found.append(judge(heights, size, f"{image.name} region {number}", spec))
    else:
        for image, result in zip(images, results, strict=True):
            found.append(judge(line_heights(result), image.size, image.name, spec))
    return found


def warning(sizes: Sequence[Judged]) -> str | None:
    """The readability guard's one line, with the remedies; None when all text is readable."""
    small = [size for size in sizes if isinstance(size, TextSize) and size.too_small]
    if not small:
        return None
    worst = min(small, key=lambda size: size.predicted_px)
    names = ", ".join(size.image for size in small)
    detail = max(size.detail_tokens for size in small)
    return (
        f"desklens: warning: the text in {names} will be about {worst.predicted_px:.0f} px tall "
        f"after the model's resize, too small to read (from {MIN_READABLE_LINE_PX:.0f} px): ask "
        f"with more detail (--max-visual-tokens {detail}), about a region (--region X,Y,W,H), "
        "or with the OCR text (--ground)."
    )


def unjudged_note(sizes: Sequence[Judged]) -> str | None:
    """One line for the images the resize shrinks in which the OCR found no text: the guard
    could not judge them (print too small for the OCR would be too small for the model too)."""
    blind = [size for size in sizes if isinstance(size, NoTextFound) and size.shrunk]
    if not blind:
        return None
    names = ", ".join(size.image for size in blind)
    detail = max(size.detail_tokens for size in blind)
    return (
        f"desklens: note: the fast OCR found no text in {names}, so the readability check "
        "could not judge it; if it holds small print, ask about a region (--region X,Y,W,H) "
        f"or with more detail (--max-visual-tokens {detail})."
    )


def warn(sizes: Sequence[Judged]) -> None:
    for line in (warning(sizes), unjudged_note(sizes)):
        if line is not None:
            print(line, file=sys.stderr)


def evidence(answer: str, results: Sequence[OcrResult] | None) -> Evidence | None:
    if results is None:
        return None
    from desktop.core.evidence import find_evidence

    return find_evidence(answer, results)


def report_not_found(found: Evidence | None) -> None:
    """After a streamed answer: its figures that no line of the images holds."""
    if found is not None and found.not_found:
        print(
            f"desklens: not found on the image: {', '.join(found.not_found)} (check these figures)",
            file=sys.stderr,
        )


def json_fields(
    sizes: Sequence[Judged], found: Evidence | None, asked: Sequence[Region]
) -> dict[str, Any]:
    """`ask --json`'s fields of the regions and the checks (absent when they did not run).
    `text_too_small` is null when no image's text was found too small but some image's
    could not be judged (no text found): not known, rather than false."""
    fields: dict[str, Any] = {}
    if asked:
        fields["regions"] = [region.to_dict() for region in asked]
    if sizes:
        fields["readability"] = [size.to_dict() for size in sizes]
        small = any(isinstance(size, TextSize) and size.too_small for size in sizes)
        unjudged = any(isinstance(size, NoTextFound) for size in sizes)
        fields["text_too_small"] = True if small else (None if unjudged else False)
    if found is not None:
        fields["evidence"] = found.to_dict()
    return fields
