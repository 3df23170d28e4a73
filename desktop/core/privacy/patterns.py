"""What counts as private in a piece of text: e-mail addresses, IBANs, payment card numbers,
phone numbers and the user's own patterns.

Each finder is strict where a miss is cheap to tell apart from a look-alike: an IBAN must pass
its mod-97 check digits (ISO 13616) at its country's length, a card number the Luhn check with
a card network's first digit; a phone number must look like one (an international "+CC", a
national trunk "0", North America's 3-3-4, or a "Tel:" label before it), so that dates,
amounts, times and invoice numbers are left alone. OCR look-alikes ("O" for "0", "l" for "1")
inside an IBAN or a card number are read as the digits before the checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from desktop.core.privacy.models import KINDS, Match

# ISO 13616 registry lengths (SWIFT's IBAN registry): an IBAN of another length is not one.
_REGISTRY = (
    "AD24 AE23 AL28 AT20 AZ28 BA20 BE16 BG22 BH22 BI27 BR29 BY28 CH21 CR22 CY28 CZ24 DE22 "
    "DJ27 DK18 DO28 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22 GI23 GL18 GR27 GT28 HR21 "
    "HU28 IE22 IL23 IQ23 IS26 IT27 JO30 KW30 KZ20 LB28 LC32 LI21 LT20 LU20 LV21 LY25 MC27 "
    "MD24 ME22 MK19 MN20 MR27 MT31 MU30 NI28 NL18 NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 "
    "RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 "
    "VG24 XK20 YE30"
)
IBAN_LENGTHS = {entry[:2]: int(entry[2:]) for entry in _REGISTRY.split()}

# Characters the recognizer confuses with digits, read as the digit inside an IBAN or card.
DIGIT_LOOKALIKES = str.maketrans(
    {"O": "0", "o": "0", "D": "0", "I": "1", "l": "1", "|": "1", "S": "5", "B": "8", "Z": "2"}
)

_EMAIL = re.compile(
    r"(?<![\w.%+'-])[\w.%+'-]*\w ?@ ?[\w-]+(?:\.[\w-]+)*\.[^\W\d_]{2,}(?![\w-])", re.UNICODE
)
# IBANs in any case: "de89 3704 …" typed in lower case is as private (the checks are the same).
_IBAN_START = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}[0-9OolI]{2}")
# An IBAN's shape: digits in it are not a card or a phone number, even when its check fails.
_IBAN_SHAPE = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]{1,4}){3,8}(?![A-Za-z0-9])"
)
_CARD_RUN = re.compile(
    r"(?<![\w.,/-])(?<![A-Za-z]{2}\d{2} )[0-9OolI](?:[ -]?[0-9OolI]){11,}(?![\w/])"
)
_PHONE_FORMS = (
    # international: +CC, or 00CC and a space (0012-3456 is an article number), then groups
    # (an optional "(0)" trunk, brackets, dots)
    re.compile(
        r"(?<![\w+])(?:\+[1-9]\d{0,2}|00[1-9]\d{0,2}(?=[ (]))(?:[ .\-/]?(?:\(0?\d{0,4}\)|\d+))+"
    ),
    # national with a trunk "0" and a break after the area code (0123456789 is a customer
    # number): 030 1234567, 0171-2345678, (030) 123 456, 089 / 123 456 78, 020 7946 0958
    re.compile(
        r"(?<![\w.,/:+-])(?:\(0\d{1,4}\) ?|0[1-9]\d{1,4}(?: ?/ ?|[ -]))"
        r"\d{2,}(?:[ -]?\d{2,}){0,3}(?![\w.,/:-])"
    ),
    # North America: (555) 123-4567, 555-123-4567, 555.123.4567
    re.compile(r"(?<![\w.,/:+-])(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[-. ])\d{3}[-. ]\d{4}(?![\w.,/:-])"),
)
# After a label ("Tel:", "Phone", "Mobile", "Fax", "Tel.-Nr."), any run of 6 to 15 digits.
_PHONE_LABEL = re.compile(
    r"(?i)\b(?:tel(?:ephone)?|phone|mobile|mob|cell|fax|handy|telefon|t[ée]l[ée]phone)"
    r"\.?(?:[- ]?(?:nr|no)\.?)?\s*[:.]?\s*"
)
_PHONE_AFTER_LABEL = re.compile(r"\+?\(?\d[\d ()./-]{4,}\d")
_DATE_LIKE = re.compile(
    r"\d{1,2}[./-]\d{1,2}[./-]\d{2,4}|\d{4}[./-]\d{1,2}[./-]\d{1,2}|\d{1,2}:\d{2}"
)
MIN_PHONE_DIGITS, MAX_PHONE_DIGITS = 7, 15  # E.164: at most 15
MAX_PATTERN_CHARS = 500
MIN_CARD_GROUP = 3  # digits in each group of a card number printed in groups


class PatternError(ValueError):
    """A user's pattern that cannot be used; str() is one sentence naming it."""


@dataclass(frozen=True)
class UserPattern:
    """One of the user's own patterns, compiled; what it matches is tagged `[custom]`."""

    source: str
    regex: re.Pattern[str]


def compile_pattern(source: str) -> UserPattern:
    """The user's regular expression, or a PatternError saying what is wrong with it."""
    shown = source if len(source) <= 60 else source[:57] + "…"
    if not source.strip():
        raise PatternError("A redaction pattern is empty.")
    if len(source) > MAX_PATTERN_CHARS:
        raise PatternError(f"The pattern '{shown}' is longer than {MAX_PATTERN_CHARS} characters.")
    try:
        regex = re.compile(source)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise PatternError(
            f"The pattern '{shown}' is not a valid regular expression: {exc.msg}{where}."
        ) from None
    if regex.fullmatch(""):
        raise PatternError(
            f"The pattern '{shown}' matches an empty text, so it would match everywhere."
        )
    return UserPattern(source, regex)


def compile_patterns(sources: Sequence[str]) -> tuple[UserPattern, ...]:
    return tuple(compile_pattern(source) for source in sources)


def find_private(text: str, patterns: Sequence[UserPattern] = ()) -> list[Match]:
    """Every private span of `text`, in order, none overlapping (an overlap is one span, the
    first finder's kind: e-mail, IBAN, card, phone, then the user's patterns)."""
    shapes = [(m.start(), m.end()) for m in _IBAN_SHAPE.finditer(text)]
    numbers = [
        m for m in (*_cards(text), *_phones(text)) if not any(a <= m.start < b for a, b in shapes)
    ]
    found = [
        *_emails(text),
        *_ibans(text),
        *numbers,
        *(
            Match("custom", m.start(), m.end(), m.group())
            for p in patterns
            for m in p.regex.finditer(text)
            if m.end() > m.start()
        ),
    ]
    return merge(found, text)


def merge(found: Sequence[Match], text: str) -> list[Match]:
    """Overlapping spans joined into one (its kind: the finder that came first)."""
    order = {kind: number for number, kind in enumerate(KINDS)}
    spans: list[Match] = []
    for match in sorted(found, key=lambda m: (m.start, order[m.kind])):
        if spans and match.start < spans[-1].end:
            last = spans[-1]
            end = max(last.end, match.end)
            spans[-1] = Match(last.kind, last.start, end, text[last.start : end])
        else:
            spans.append(match)
    return spans


def _emails(text: str) -> Iterator[Match]:
    for match in _EMAIL.finditer(text):
        yield Match("email", match.start(), match.end(), match.group())


def _ibans(text: str) -> Iterator[Match]:
    from desktop.core.ocr.code_payments import iban_is_valid  # the OCR's modules load on use

    for start in _IBAN_START.finditer(text):
        length = IBAN_LENGTHS.get(start.group()[:2].upper())
        if length is None:
            continue
        end = _take_alnum(text, start.start(), length)
        if end is None:
            continue
        compact = re.sub(r"[ -]", "", text[start.start() : end]).upper()
        if not compact.isascii():  # "de12 Grüße …": letters no IBAN holds
            continue
        # as read; look-alikes in the check digits read as digits; everywhere (a numeric BBAN)
        readings = (
            compact,
            compact[:2] + compact[2:4].translate(DIGIT_LOOKALIKES) + compact[4:],
            compact[:2] + compact[2:].translate(DIGIT_LOOKALIKES),
        )
        if any(iban_is_valid(reading) for reading in readings):
            yield Match("iban", start.start(), end, text[start.start() : end])


def _take_alnum(text: str, start: int, count: int) -> int | None:
    """The end of `count` letters and digits from `start`, single spaces or dashes allowed
    between them (groups of four as printed), ending at a word boundary; None if not there."""
    taken, position = 0, start
    while position < len(text) and taken < count:
        char = text[position]
        if char.isalnum():
            taken += 1
        elif not (
            char in " -" and taken and position + 1 < len(text) and text[position + 1].isalnum()
        ):
            return None
        position += 1
    if taken < count or (position < len(text) and text[position].isalnum()):
        return None
    return position


def luhn_valid(digits: str) -> bool:
    total = 0
    for number, char in enumerate(reversed(digits)):
        value = int(char) * (2 if number % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def is_card_number(digits: str) -> bool:
    """13 to 19 digits with a card network's first digit (2 to 6: Mastercard's 2-series, Amex,
    Visa, Mastercard, Discover / UnionPay / Maestro), passing Luhn, not one digit repeated."""
    return (
        13 <= len(digits) <= 19
        and digits.isdigit()
        and digits[0] in "23456"
        and len(set(digits)) > 1
        and luhn_valid(digits)
    )


def _cards(text: str) -> Iterator[Match]:
    """Card numbers inside runs of digits and separators: the longest stretch that starts and
    ends at a group's edge and passes the checks ("4111 1111 1111 1111 12 27": the 16)."""
    for run in _CARD_RUN.finditer(text):
        groups = [
            (m.start() + run.start(), m.end() + run.start())
            for m in re.finditer(r"[0-9OolI]+", run.group())
        ]
        found = _longest_card(text, groups)
        if found is not None:
            yield Match("card", found[0], found[1], text[found[0] : found[1]])


def _longest_card(text: str, groups: list[tuple[int, int]]) -> tuple[int, int] | None:
    """Printed card numbers come in groups of 3 to 6 digits (4-4-4-4, Amex 4-6-5): a run
    with a shorter group is a date or a time ("2025-10-04 10"), not a card."""
    best: tuple[int, int] | None = None
    for first in range(len(groups)):
        for last in range(first, len(groups)):
            short = any(b - a < MIN_CARD_GROUP for a, b in groups[first : last + 1])
            if short and last > first:
                continue
            start, end = groups[first][0], groups[last][1]
            digits = re.sub(r"[ -]", "", text[start:end]).translate(DIGIT_LOOKALIKES)
            if is_card_number(digits) and (best is None or end - start > best[1] - best[0]):
                best = (start, end)
    return best


def _phones(text: str) -> Iterator[Match]:
    for form in _PHONE_FORMS:
        for match in form.finditer(text):
            found = _phone_span(text, match.start(), match.end())
            if found is not None:
                yield found
    for label in _PHONE_LABEL.finditer(text):
        number = _PHONE_AFTER_LABEL.match(text, label.end())
        if number is not None:
            found = _phone_span(text, number.start(), number.end(), labelled=True)
            if found is not None:
                yield found


def _phone_span(text: str, start: int, end: int, *, labelled: bool = False) -> Match | None:
    value = text[start:end].rstrip(" ./-(")
    digits = sum(char.isdigit() for char in value)
    if not MIN_PHONE_DIGITS <= digits <= MAX_PHONE_DIGITS:
        return None
    if _DATE_LIKE.fullmatch(value.strip()) or (not labelled and _looks_like_amount(value)):
        return None
    return Match("phone", start, start + len(value), value)


def _looks_like_amount(value: str) -> bool:
    """1.234.567 or 12.345,67: thousands groups of three after a dot, or decimals after it."""
    return bool(re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d{1,2})?", value))
