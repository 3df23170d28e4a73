"""Redact a page: read it, find the private spans, fill their boxes, read the result again.

The read-back is the proof: the filled page is read by the same OCR, and anything the finders
see on it is filled too (a second round: text the first read had garbled may read cleanly
once its neighbours are gone), as is the whole line of a span whose characters are still read;
a span still read back after that is a leak, which the front ends report instead of calling
the page redacted. Only the boxes' pixels change; the saved
image carries no metadata of the original (EXIF, GPS, text chunks).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Literal

import numpy as np
from PIL import Image

from desktop.core import atomic
from desktop.core.images import LoadedImage, load_image
from desktop.core.ocr.models import OcrResult
from desktop.core.privacy.boxes import between_lines, covered_words, place, same_rows
from desktop.core.privacy.faint import beyond, faint_ink, stretched
from desktop.core.privacy.models import Span, counted, items
from desktop.core.privacy.orientation import UPRIGHT, Turn, poor, upright
from desktop.core.privacy.patterns import UserPattern
from desktop.core.privacy.spans import find_spans, tagged

FILL = (0, 0, 0)  # solid black: plainly redacted, whatever the theme of the page
MAX_ROUNDS = 2  # read-backs: a second filling for what the first revealed, then the check
Reader = Callable[[LoadedImage], OcrResult]  # the OCR engine's `extract`
Outcome = Literal["redacted", "clean", "unreadable", "leaked", "unproven"]
# Lossless formats only: JPEG would change pixels outside the boxes (and blur their edges).
SUFFIXES = {".png": "PNG", ".webp": "WEBP", ".tif": "TIFF", ".tiff": "TIFF", ".bmp": "BMP"}


@dataclass(frozen=True)
class Redaction:
    """What redacting one page did."""

    image: Image.Image  # the page with the spans' boxes filled (the original when none)
    source_name: str
    spans: tuple[Span, ...]  # every span filled, over all rounds
    result: OcrResult  # the first read, its spans replaced by tags: text and exports
    leaks: tuple[Span, ...] = ()  # spans the OCR still read on the filled page
    unsure_lines: int = 0  # lines found but not read: they may hold something private
    own_patterns: int = 0  # how many of the user's patterns were looked for
    proven: bool = True  # False: no orientation read well (`orientation.upright`)
    turned: int = 0  # degrees (counterclockwise) the page was turned by to be read

    @property
    def outcome(self) -> Outcome:
        read = bool(self.result.lines or self.result.codes)
        return outcome_of(self.spans, self.leaks, read, self.proven)

    def summary(self, target: str = "") -> str:
        """One sentence for the user: what was redacted, or that nothing was found, or that
        nothing could be read (never silence), or what the OCR still reads."""
        if self.outcome == "leaked":
            return leaked_sentence(self.leaks)
        if self.outcome == "unproven":
            return unproven_sentence(self.spans)
        if self.outcome == "unreadable":
            return (
                "Could not read any text on this page: nothing was redacted (the page may "
                "be blank, too small or a photo)."
            )
        if self.outcome == "clean":
            return clean_sentence(len(self.result.lines), self.own_patterns)
        return redacted_sentence(self.spans, target)

    def warning(self) -> str | None:
        """A second sentence when part of the page could not be read (it may hide more)."""
        return unsure_sentence(self.unsure_lines, "on the page")

    def text(self) -> str:
        """The page's text with its items tagged."""
        return self.result.text()

    def report(self) -> dict:
        """The spans filled and the leaks, for JSON."""
        return {
            "spans": [s.to_json() for s in self.spans],
            "leaks": [s.to_json() for s in self.leaks],
        }


def outcome_of(
    spans: Sequence[Span], leaks: Sequence[Span], read: bool, proven: bool = True
) -> Outcome:
    """Leaked over unproven (the page's read proves nothing) over redacted over clean (text
    was `read`) over unreadable."""
    if leaks:
        return "leaked"
    if not proven and (spans or read):  # a page of no text at all is "unreadable"
        return "unproven"
    if spans:
        return "redacted"
    return "clean" if read else "unreadable"


def leaked_sentence(leaks: Sequence[Span], where: str = "") -> str:
    names = ", ".join(f"{s.masked()} ({s.kind})" for s in leaks)
    return (
        f"Not redacted safely: the OCR still reads {names} on the filled page{where}; "
        "nothing was saved."
    )


def unproven_sentence(spans: Sequence[Span], page: str = "this page") -> str:
    found = f" (it found {counted(spans)})" if spans else ""
    return (
        f"Could not prove {page} clean: the OCR read it unsurely whichever way up "
        f"it was turned{found}, so it may hold items it could not read (a photo, a faint, "
        "skewed or handwritten page, a script it does not know); nothing was saved."
    )


def clean_sentence(lines: int, own_patterns: int, where: str = "") -> str:
    return (
        f"Nothing to redact: the OCR read {lines} line{'s' if lines != 1 else ''}{where} "
        "and found no e-mail, IBAN, card or phone number"
        f"{' or match of your patterns' if own_patterns else ''}."
    )


def redacted_sentence(spans: Sequence[Span], target: str, where: str = "") -> str:
    count, arrow = items(spans), f" → {target}" if target else ""
    return f"Redacted {count} item{'s' if count != 1 else ''} ({counted(spans)}){where}{arrow}."


def unsure_sentence(lines: int, where: str) -> str | None:
    if not lines:
        return None
    many = lines != 1
    return (
        f"{lines} line{'s' if many else ''} {where} could not be read, so "
        f"{'they were' if many else 'it was'} not checked."
    )


def redact_page(
    read: Reader,
    image: LoadedImage,
    patterns: Sequence[UserPattern] = (),
    first: OcrResult | None = None,
) -> Redaction:
    """Find, fill, read back; see the module's docstring. `first`: the page's text when it
    is known already (a PDF page's text layer, on the pixels of `image`); the read-backs are
    the OCR's all the same. A page read poorly is read turned (`orientation.upright`): its
    items are filled on the turned page, which is turned back."""
    first = first if first is not None else read(image)
    turn, first, proven = upright(read, image, first)
    page = image if turn == UPRIGHT else load_image(turn.show(image.image), name=image.name)
    done = replace(_redact_upright(read, page, patterns, first), proven=proven)
    if first.text_layer or not faint_ink(page.image, first):
        return _turned_back(done, turn, image.image.size)
    # faint ink no line holds: its items found on a contrast-stretched copy, filled here
    view = load_image(stretched(done.image), name=image.name)
    seen = read(view)
    faint = _redact_upright(read, view, patterns, seen)
    done = replace(
        done,
        # proven by a good read of the whole stretched copy, unless its faint text is garbage
        proven=(proven or not poor(seen)) and not poor(beyond(seen, first)),
        image=fill(done.image, faint.spans),
        spans=done.spans + faint.spans,
        leaks=done.leaks + faint.leaks,
        result=done.result if done.result.lines else faint.result,
    )
    return _turned_back(done, turn, image.image.size)


def _turned_back(done: Redaction, turn: Turn, size: tuple[int, int]) -> Redaction:
    """A redaction of the page turned by `turn`, on the page as it is (`size`)."""
    if turn == UPRIGHT:
        return done

    def back(spans: Sequence[Span]) -> tuple[Span, ...]:
        return tuple(
            replace(s, boxes=tuple(turn.box_back(b, size) for b in s.boxes)) for s in spans
        )

    return replace(done, image=turn.back(done.image), spans=back(done.spans),
                   leaks=back(done.leaks), turned=turn.degrees)  # fmt: skip


def _redact_upright(
    read: Reader, image: LoadedImage, patterns: Sequence[UserPattern], first: OcrResult
) -> Redaction:
    """`redact_page` on a page the way up it is read."""
    spans = place(find_spans(first, patterns), first, image.image)
    unsure = first.unsure_lines
    if not spans:
        return Redaction(image.image, image.name, (), first, (), unsure, len(patterns))
    filled, done = fill(image.image, spans), list(spans)
    lines = {span: _line_text(first, span) for span in spans}  # where each was read
    leaks: list[Span] = []
    for number in range(MAX_ROUNDS):
        again = read(load_image(filled, name=image.name))
        found = place(find_spans(again, patterns), again, filled)
        read_again = [s for s in done if read_back(s, again, lines.get(s, ""))]
        known = {_plain(s.text) for s in read_again}  # found again: the same item
        found = [s for s in found if _plain(s.text) not in known]
        leaks = read_again + found
        if not leaks or number == MAX_ROUNDS - 1:
            break
        wider = [_whole_line(s, first, filled.size) for s in read_again]
        lines |= {w: lines.get(s, "") for w, s in zip(wider, read_again, strict=True)}
        lines |= {s: _line_text(again, s) for s in found}
        filled = fill(filled, found + wider)
        done = [s for s in done if s not in read_again] + wider + found
    return Redaction(
        filled,
        image.name,
        tuple(done),
        tagged(first, spans + _filled_later(first, image.image, spans, done)),
        tuple(leaks),
        unsure,
        len(patterns),
    )


def _filled_later(
    first: OcrResult, image: Image.Image, spans: Sequence[Span], done: Sequence[Span]
) -> list[Span]:
    """The first read's words under what the read-backs had filled (an item the first read
    garbled, a whole line), as spans to tag: the tagged text stands for the filled pixels."""
    return [
        Span(span.kind, first.lines[line].text[start:end], line, start, end)
        for span in done
        if span not in spans and span.code is None
        for line, start, end in covered_words(first, image, span.boxes)
    ]


def _whole_line(span: Span, result: OcrResult, size: tuple[int, int]) -> Span:
    """A span read back after filling: its whole line (or code) filled, with a margin."""
    if span.code is not None:
        return span
    left, top, right, bottom = result.lines[span.line].box
    pad = max(2, (bottom - top) // 4)
    box = (max(left - pad, 0), max(top - pad, 0), min(right + pad, size[0]),
           min(bottom + pad, size[1]))  # fmt: skip
    box = between_lines(box, span.line, result)  # the lines above and below stay
    return replace(span, boxes=(*span.boxes, box), estimated=True)


def fill(image: Image.Image, spans: Sequence[Span]) -> Image.Image:
    """A copy of the image (RGB) with every span's boxes filled."""
    pixels = np.array(image.convert("RGB"))
    for span in spans:
        for left, top, right, bottom in span.boxes:
            pixels[top:bottom, left:right] = FILL
    return Image.fromarray(pixels, "RGB")


def _plain(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def _line_text(result: OcrResult, span: Span) -> str:
    return result.lines[span.line].text if span.code is None else ""


def read_back(span: Span, result: OcrResult, line: str = "") -> bool:
    """Does the result still hold the span's characters (spacing and punctuation aside): the
    whole value anywhere on the page, or a piece of it (4 characters or more, and not found
    elsewhere on `line`, the text it was read in) on a line where it was filled? A piece
    gives away a box placed a word off ("priya" of "priya@example.com")."""
    wanted = _plain(span.text)
    page = _plain(" ".join(line.text for line in result.lines))
    if len(wanted) >= 4 and (
        wanted in page or any(wanted in _plain(code.text) for code in result.codes)
    ):
        return True
    if span.code is not None:
        return False
    outside = _plain(line[: span.start]) + " " + _plain(line[span.end :])
    pieces = {_plain(piece) for piece in re.split(r"[\W_]+", span.text)}
    pieces = {piece for piece in pieces if len(piece) >= 4 and piece not in outside}
    return any(
        piece in _plain(read.text)
        for read in result.lines
        if any(same_rows(read.box, box) for box in span.boxes)
        for piece in pieces
    )


def image_format(path: str | os.PathLike) -> str:
    """PIL's format name for a lossless output file, or a ValueError sentence."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(
            f"Cannot write {Path(path).name}: a redacted page is saved as PNG, WebP, TIFF or "
            "BMP (lossless: JPEG would change the pixels around the boxes)."
        )
    return SUFFIXES[suffix]


def save_image(image: Image.Image, path: str | os.PathLike) -> Path:
    """The image written whole (temporary file, then renamed), lossless, with no metadata."""
    kind = image_format(path)

    def save(file: IO[bytes]) -> None:
        options = {"lossless": True} if kind == "WEBP" else {}
        image.save(file, format=kind, **options)

    return atomic.write_output(path, save, lambda file: Image.open(file).verify())
