"""Where an answer came from: the OCR lines of the images that the answer quotes.

After an answer, its figures (amounts, ids, dates: numbers of 3 digits or more, or written
with a separator, a currency sign or a percent), its quoted phrases and names, and its own
lines are looked up in the fast OCR's lines of the question's images. Figures match by value,
whatever their formatting ("12,450.50", "12450.5", "12 450,50" and "12.450,50" are one amount);
phrases match fuzzily (case, spacing, punctuation and a few misread characters do not count).
A figure that matches no line is reported as not found on the image: a cheap guard against a
misread number. Names and phrases that match nothing are not reported (the answer may word
things its own way).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from difflib import SequenceMatcher
from typing import Any

from desktop.core.ocr.models import Box, OcrResult

SIMILAR = 0.85  # share of a phrase's characters found in order in a line: its words
MAX_PHRASES = 400  # an answer's phrases looked up (a long answer's first ones)
_SPACE_GROUPS = re.compile(r"(?<=\d)[ \u00a0\u202f\u2009](?=\d{3}(?!\d))")
_NUMBER = re.compile(r"[$€£¥]?\d(?:[\d,.'’]*\d)?%?")
# A number as the answer writes it, digit groups maybe apart ("12 450.50"): what a link covers.
_WRITTEN_NUMBER = re.compile(
    r"[$€£¥]?\d(?:(?:[\d,.'’]|[ \u00a0\u202f\u2009](?=\d{3}(?!\d)))*\d)?%?"
)
_QUOTED = re.compile(r"\"([^\"\n]{3,200})\"|“([^”\n]{3,200})”|`([^`\n]{3,200})`")
_NAME = re.compile(r"(?<![\w.])[A-Z][\w&'-]+(?:\s+[A-Z][\w&'-]+)+|(?<=[a-z,;:] )[A-Z][\w-]{4,}")
# A key of JSON (or a Python dict) in an answer: a label the model chose, not a value read on
# the image ({"total": "786.52"} linked "total" to "Subtotal 660.94"). Keys are not evidence.
_KEY = re.compile(r"\"[^\"\n]{1,200}\"\s*:|'[^'\n]{1,200}'\s*:")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|#+)\s+")
_MARKUP = re.compile(r"[*_|]+")


@dataclass(frozen=True)
class EvidenceLine:
    """An OCR line the answer quotes, with what of the answer it holds."""

    image: int  # index into the question's images
    line: int  # index into that image's OcrResult.lines
    text: str
    box: Box  # left, top, right, bottom in the image's pixels
    quotes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "image": self.image,
            "line": self.line,
            "text": self.text,
            "box": list(self.box),
            "quotes": list(self.quotes),
        }


@dataclass(frozen=True)
class Evidence:
    lines: tuple[EvidenceLine, ...] = ()
    not_found: tuple[str, ...] = ()  # the answer's figures that no line holds

    def to_dict(self) -> dict[str, Any]:
        return {
            "lines": [line.to_dict() for line in self.lines],
            "not_found": list(self.not_found),
        }

    @property
    def empty(self) -> bool:
        """No quoted line and no figure missing: nothing to show or keep."""
        return not (self.lines or self.not_found)

    @classmethod
    def from_dict(cls, data: object) -> Evidence:
        """Evidence as `to_dict` wrote it (the history keeps an answer's); a damaged line or
        figure is left out, anything else damaged gives no evidence (the answer still shows)."""
        if not isinstance(data, dict):
            return cls()
        lines = data.get("lines")
        found = data.get("not_found")
        kept = (_line_from(item) for item in (lines if isinstance(lines, list) else []))
        figures = found if isinstance(found, list) else []
        return cls(
            tuple(line for line in kept if line is not None),
            tuple(text for text in figures if isinstance(text, str)),
        )


def _line_from(data: object) -> EvidenceLine | None:
    if not isinstance(data, dict):
        return None
    numbers = [data.get("image"), data.get("line")]
    box, text, quotes = data.get("box"), data.get("text"), data.get("quotes")
    if not (isinstance(box, list) and len(box) == 4 and isinstance(text, str)):
        return None
    if not all(type(value) is int for value in [*numbers, *box]) or not isinstance(quotes, list):
        return None
    image, line = numbers
    left, top, right, bottom = box
    assert isinstance(image, int) and isinstance(line, int)  # checked above, for mypy
    words = tuple(quote for quote in quotes if isinstance(quote, str))
    return EvidenceLine(image, line, text, (left, top, right, bottom), words)


def find_evidence(answer: str, results: Sequence[OcrResult]) -> Evidence:
    """The OCR lines of `results` (one per image, in order) that `answer` quotes."""
    answer = without_keys(answer)
    lines = [
        (image, number, line.text, line.box)
        for image, result in enumerate(results)
        for number, line in enumerate(result.lines)
    ]
    prepared = [_Line(*line) for line in lines]
    found: dict[tuple[int, int], list[str]] = {}
    not_found: list[str] = []
    for figure in figures(answer):
        hits = [line for line in prepared if _values(figure) & line.values]
        if not hits:
            not_found.append(figure)
        for line in hits:
            _add(found, line, figure)
    for phrase in phrases(answer):
        for line in prepared:
            if similar(phrase, line.norm):
                _add(found, line, phrase)
    by_key = {(line.image, line.line): line for line in prepared}
    evidence = tuple(
        EvidenceLine(key[0], key[1], by_key[key].text, by_key[key].box, tuple(quotes))
        for key, quotes in sorted(found.items())
    )
    return Evidence(evidence, tuple(dict.fromkeys(not_found)))


@dataclass(frozen=True)
class EvidenceLink:
    """Words of the answer, as written, that one evidence line holds."""

    text: str  # a figure or quoted phrase or name exactly as it is in the answer
    line: int  # index into Evidence.lines: the first line that holds it


def evidence_links(answer: str, evidence: Evidence) -> tuple[EvidenceLink, ...]:
    """The answer's figures, quoted phrases and names that an evidence line holds, as
    written (a figure found nowhere, or the answer's own lines matched whole, are not)."""
    answer = without_keys(answer)
    held: dict[str, int] = {}
    for index, line in enumerate(evidence.lines):
        for quote in line.quotes:
            held.setdefault(quote, index)
    written = [(m.group().rstrip(".,"), False) for m in _WRITTEN_NUMBER.finditer(answer)]
    written += [(next(g for g in m.groups() if g), True) for m in _QUOTED.finditer(answer)]
    written += [(m.group(), True) for m in _NAME.finditer(answer)]
    links: dict[str, int] = {}
    for text, phrase in written:
        key = normalise(text) if phrase else _SPACE_GROUPS.sub("", text)
        if key in held and text not in links:
            links[text] = held[key]
    return tuple(EvidenceLink(text, line) for text, line in links.items())


def without_keys(answer: str) -> str:
    """`answer` with its JSON and dict keys blanked out (only values are looked up)."""
    return _KEY.sub(lambda match: " " * len(match.group()), answer)


def figures(answer: str) -> list[str]:
    """The answer's numbers that look copied from the image (not "2 rows" or a "1." item)."""
    found = []
    for match in _NUMBER.finditer(_SPACE_GROUPS.sub("", answer)):
        token = match.group()
        digits = sum(char.isdigit() for char in token)
        if digits >= 3 or any(char in token for char in ",.'’%$€£¥"):
            found.append(token.rstrip(".,"))
    return list(dict.fromkeys(found))


def phrases(answer: str) -> list[str]:
    """Quoted phrases, names, and the answer's own lines of two words or more, normalised."""
    candidates = [next(g for g in match.groups() if g) for match in _QUOTED.finditer(answer)]
    candidates += [match.group() for match in _NAME.finditer(answer)]
    for line in answer.splitlines():
        words = _MARKUP.sub(" ", _BULLET.sub("", line)).strip()
        if len(words.split()) >= 2:
            candidates.append(words)
    normalised = (normalise(phrase) for phrase in candidates)
    kept = dict.fromkeys(phrase for phrase in normalised if len(phrase) >= 3)
    return list(kept)[:MAX_PHRASES]


def normalise(text: str) -> str:
    """Casefolded, compatibility forms, thousands separators and punctuation out, one space."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _SPACE_GROUPS.sub("", text)
    text = re.sub(r"(?<=\d)[,'’](?=\d{3}(?!\d))", "", text)
    text = re.sub(r"[^\w.%$€£¥]+|(?<!\d)\.|\.(?!\d)", " ", text)
    return " ".join(text.split())


def similar(phrase: str, line: str) -> bool:
    """Whether normalised `phrase` is (nearly) in normalised `line`, or the line in it: the
    shorter one's characters found in order in the longer one, at least SIMILAR of them."""
    if not phrase or not line:
        return False
    if phrase in line or (len(line) >= 8 and line in phrase):
        return True
    short, long = sorted((phrase, line), key=len)
    if len(short) < 8 or len(short) < 0.5 * len(long):
        return False  # a short or partial phrase must match as it is
    words = set(short.split())
    if 2 * len(words & set(long.split())) < len(words):
        return False  # most words differ: not worth the character match (it is quadratic)
    blocks = SequenceMatcher(None, short, long, autojunk=False).get_matching_blocks()
    return sum(block.size for block in blocks) >= SIMILAR * len(short)


class _Line:
    """An OCR line prepared for matching: its normalised text and its numbers' values."""

    def __init__(self, image: int, line: int, text: str, box: Box) -> None:
        self.image, self.line, self.text, self.box = image, line, text, box
        self.norm = normalise(text)
        self.values: set[Decimal] = set()
        for match in _NUMBER.finditer(_SPACE_GROUPS.sub("", text)):
            self.values |= _values(match.group())


def _add(found: dict[tuple[int, int], list[str]], line: _Line, quote: str) -> None:
    quotes = found.setdefault((line.image, line.line), [])
    if quote not in quotes:
        quotes.append(quote)


def _values(token: str) -> set[Decimal]:
    """The amounts a written number can mean: "12,450.50" one, "12.450" two (a thousands
    point, or a decimal one)."""
    body = token.strip("$€£¥%").replace("’", "'").replace("'", "")
    return {value for value in _readings(body) if value is not None}


def _readings(body: str) -> Iterator[Decimal | None]:
    separators = [char for char in body if char in ",."]
    if not separators:
        yield _decimal(body)
        return
    last = separators[-1]
    whole, _, fraction = body.rpartition(last)
    if len(set(separators)) == 2 or separators.count(last) == 1:
        yield _decimal(re.sub(r"[,.]", "", whole) + "." + fraction)  # the last one: decimal
    if len(fraction) == 3 and len(set(separators)) == 1:
        yield _decimal(body.replace(last, ""))  # all of them: thousands


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text).normalize()
    except InvalidOperation:
        return None
