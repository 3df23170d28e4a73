"""What redaction finds and what it did, as frozen values (Qt-free, no numpy)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["email", "iban", "card", "phone", "custom"]
KINDS: tuple[Kind, ...] = ("email", "iban", "card", "phone", "custom")
Box = tuple[int, int, int, int]  # left, top, right, bottom in image pixels

# What replaces a span in the text: the OCR text, exports, the question sent to a server.
TAGS: dict[Kind, str] = {kind: f"[{kind}]" for kind in KINDS}
_NAMES: dict[Kind, tuple[str, str]] = {
    "email": ("e-mail", "e-mails"),
    "iban": ("IBAN", "IBANs"),
    "card": ("card number", "card numbers"),
    "phone": ("phone number", "phone numbers"),
    "custom": ("match of your patterns", "matches of your patterns"),
}


@dataclass(frozen=True)
class Match:
    """A private span of one piece of text: its kind and its characters [start, end)."""

    kind: Kind
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Span:
    """A private span of an OCR line (`OcrResult.lines[line]`), or of a code (`code` set:
    the index of a QR code or barcode whose content holds it), with the pixels it covers."""

    kind: Kind
    text: str
    line: int
    start: int
    end: int
    boxes: tuple[Box, ...] = ()
    estimated: bool = False  # placed by the characters' widths, not found in the ink
    code: int | None = None
    continues: bool = False  # the next line's part of an item a line break cut in two

    @property
    def tag(self) -> str:
        return TAGS[self.kind]

    def masked(self) -> str:
        """The value with its middle hidden ("jo…om"), for messages that name what was found."""
        value = "".join(self.text.split())
        return value if len(value) <= 4 else f"{value[:2]}…{value[-2:]}"

    def to_json(self) -> dict:
        data: dict = {
            "kind": self.kind,
            "tag": self.tag,
            "line": self.line,
            "start": self.start,
            "end": self.end,
            "boxes": [list(box) for box in self.boxes],
            "estimated": self.estimated,
        }
        if self.code is not None:
            data["code"] = self.code
        return data


def items(spans: Sequence[Span]) -> int:
    """How many items the spans are (the two parts of a wrapped one are one)."""
    return sum(not span.continues for span in spans)


def name_of(kind: Kind, count: int = 1) -> str:
    return _NAMES[kind][0 if count == 1 else 1]


def counted(spans: Sequence[Span]) -> str:
    """ "1 e-mail, 2 IBANs, 1 card number": how many of each kind, in the finders' order (an
    item cut by a line break once)."""
    counts = Counter(span.kind for span in spans if not span.continues)
    return ", ".join(f"{counts[k]} {name_of(k, counts[k])}" for k in KINDS if counts[k])
