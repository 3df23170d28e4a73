"""The redaction finders (issue 49): what they catch, and the look-alikes they must leave."""

from __future__ import annotations

import random

import pytest

from desktop.core.ocr.models import OcrLine, OcrResult, OcrTable
from desktop.core.privacy.models import Span, counted
from desktop.core.privacy.patterns import (
    PatternError,
    compile_pattern,
    find_private,
    is_card_number,
    luhn_valid,
)
from desktop.core.privacy.spans import find_spans, tag_text, tagged
from devkit.redaction_pages import card, iban


def kinds(text: str, patterns=()) -> list[tuple[str, str]]:
    return [(m.kind, m.text) for m in find_private(text, patterns)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mail john.smith@example.com today", ("email", "john.smith@example.com")),
        (
            "e-mail: anna-maria.o'neil@mail.example.co.uk",
            ("email", "anna-maria.o'neil@mail.example.co.uk"),
        ),
        ("write to ops @ example.org", ("email", "ops @ example.org")),
        (
            "IBAN: DE89 3704 0044 0532 0130 00 BIC COBADEFFXXX",
            ("iban", "DE89 3704 0044 0532 0130 00"),
        ),
        ("GB82 WEST 1234 5698 7654 32", ("iban", "GB82 WEST 1234 5698 7654 32")),
        ("NL91ABNA0417164300", ("iban", "NL91ABNA0417164300")),
        ("IBAN DE89 37O4 0044 0532 0130 00", ("iban", "DE89 37O4 0044 0532 0130 00")),  # O for 0
        ("Card 4111 1111 1111 1111 exp 12/27", ("card", "4111 1111 1111 1111")),
        ("Amex 3782-822463-10005", ("card", "3782-822463-10005")),
        ("paid with 5555555555554444.", ("card", "5555555555554444")),
        ("Tel: +49 30 1234567", ("phone", "+49 30 1234567")),
        ("+44 20 7946 0958", ("phone", "+44 20 7946 0958")),
        ("Call (555) 123-4567", ("phone", "(555) 123-4567")),
        ("or 555.987.6543 after six", ("phone", "555.987.6543")),
        ("Mob.: 0171 2345678", ("phone", "0171 2345678")),
        ("Fax 089 / 123 456 78", ("phone", "089 / 123 456 78")),
        ("call 0049 30 1234567", ("phone", "0049 30 1234567")),
    ],
)
def test_finds(text, expected):
    assert kinds(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "IBAN DE89 3704 0044 0532 0130 01",  # check digits fail
        "DE00 3704 0044 0532 0130 00",
        "XX89 3704 0044 0532 0130 00",  # no such country
        "Card 4111 1111 1111 1112",  # fails Luhn
        "Order 1234567812345678",  # 16 digits, fails Luhn
        "Serial 8111 1111 1111 1116",  # passes Luhn, no card network starts with 8
        "0000 0000 0000 0000",
        "Date 2024-01-15, 15.01.2024 and 01/15/2024 at 12:30",
        "Total 1.234.567,89 EUR or USD 12,345.67 and 1 234 567,89",
        "Invoice INV-2024-00123 No. 123456789 ref 2024-0001-0042",
        "ISBN 978-3-16-148410-0, zip 10115 Berlin, page 12 of 30",
        "Qty 3 x 19.99 = 59.97, amount 0,50 EUR",
        "Account no. 1234567890, order 12345678",
        "version 1.2.3 at user@localhost",  # no top-level domain
        "Tracking 1Z999AA10123456784",
        "SKU 0012-3456-7890, PO 0045123456, Kundennr. 0123456789",
        "Server 192.168.100.1 port 8080, version 10.0.19045.3803, 12:30 - 14:45",
    ],
)
def test_leaves_look_alikes(text):
    assert kinds(text) == []


def test_generated_ibans_and_cards_pass_and_one_changed_digit_fails():
    rng = random.Random(7)
    for country in ("DE", "GB", "FR", "NL", "AT"):
        value = iban(rng, country)
        assert kinds(f"IBAN {value}") == [("iban", value)]
        wrong = value[:-1] + str((int(value[-1]) + 1) % 10)
        assert all(kind != "iban" for kind, _ in kinds(f"IBAN {wrong}"))
    for _ in range(20):
        number = card(rng)
        digits = number.replace(" ", "")
        assert luhn_valid(digits) and is_card_number(digits)
        assert kinds(f"card {number} exp") == [("card", number)]
        wrong = digits[:-1] + str((int(digits[-1]) + 3) % 10)
        assert not luhn_valid(wrong)
        assert kinds(f"card {wrong}") == []


def test_card_number_among_other_digits_is_the_valid_stretch():
    assert kinds("4111 1111 1111 1111 12 27") == [("card", "4111 1111 1111 1111")]


def test_user_patterns_and_their_errors():
    pattern = compile_pattern(r"Project \w+")
    assert kinds("Project Falcon ships in May", [pattern]) == [("custom", "Project Falcon")]
    with pytest.raises(PatternError, match=r"'a\(b' is not a valid regular expression.*position 1"):
        compile_pattern("a(b")
    with pytest.raises(PatternError, match="matches an empty text"):
        compile_pattern("x*")
    with pytest.raises(PatternError, match="empty"):
        compile_pattern("   ")
    with pytest.raises(PatternError, match="longer than"):
        compile_pattern("a" * 501)


def test_overlapping_spans_are_one():
    pattern = compile_pattern(r"example\.com today")
    found = find_private("Mail jo@example.com today", [pattern])
    assert [(m.kind, m.text) for m in found] == [("email", "jo@example.com today")]


def test_question_text_is_tagged():
    question = "Is DE89 3704 0044 0532 0130 00 the IBAN of jo@example.com? Call +49 30 1234567."
    assert tag_text(question) == "Is [iban] the IBAN of [email]? Call [phone]."
    assert tag_text("What is the total on this invoice?") == "What is the total on this invoice?"


def line(text, number=0, paragraph=0, table=None):
    return OcrLine(
        text,
        (0, 20 * number, 400, 20 * number + 16),
        0.99,
        paragraph,
        kind="table" if table is not None else "text",
        table=table,
    )


def test_spans_of_a_result_lines_cells_and_a_wrapped_email():
    rows = (("Name", "Card"), ("Anna", "4111 1111 1111 1111"))
    result = OcrResult(
        lines=[
            line("Contact: anna.schmidt@exam", 0, 0),
            line("ple.com for details", 1, 0),
            line("Name\tCard", 2, 1, table=0),
            line("Anna\t4111 1111 1111 1111", 3, 1, table=0),
        ],
        width=400,
        height=100,
        seconds=0.0,
        tables=[OcrTable(rows, (0, 40, 400, 76), ruled=False)],
    )
    spans = find_spans(result)
    assert [(s.kind, s.line, s.text) for s in spans] == [
        ("card", 3, "4111 1111 1111 1111"),
        ("email", 0, "anna.schmidt@exam"),
        ("email", 1, "ple.com"),
    ]
    out = tagged(result, spans)
    assert out.text().splitlines()[:2] == ["Contact: [email]", "[email] for details"]
    assert out.tables[0].rows[1] == ("Anna", "[card]")
    assert "4111" not in out.to_json() and "[card]" in out.markdown()
    assert counted(spans) == "1 e-mail, 1 card number"  # the wrapped one once


def test_masked_value_in_messages():
    span = Span("email", "john.smith@example.com", 0, 0, 22)
    assert span.masked() == "jo…om" and "example" not in span.masked()


def _page(texts, paragraphs, gap=12, height=28):
    """Lines one below the other (`gap` px apart), in the layout's `paragraphs`."""
    lines = [
        OcrLine(
            text,
            (40, 20 + n * (height + gap), 40 + 14 * len(text), 20 + n * (height + gap) + height),
            0.99,
            paragraph,
        )  # fmt: skip
        for n, (text, paragraph) in enumerate(zip(texts, paragraphs, strict=True))
    ]
    return OcrResult(lines, 1100, 400, 0.0)


def _found(result):
    return [(s.kind, s.text, s.line, s.continues) for s in find_spans(result)]


@pytest.mark.parametrize("paragraphs", [(0, 0), (0, 1)])  # the layout's split varies by width
def test_a_card_wrapped_after_its_second_group_is_one_card(paragraphs):
    result = _page(["Card number 4111 1111", "1111 1111 expires soon."], paragraphs)
    assert _found(result) == [("card", "4111 1111", 0, False), ("card", "1111 1111", 1, True)]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Pay to DE89", "3704 0044 0532 0130 00 today."),
        ("Pay to DE89 3704", "0044 0532 0130 00 today."),
        ("Pay to DE89 3704 0044", "0532 0130 00 today."),
        ("Pay to DE89 3704 0044 0532 0130", "00 today."),
        ("Pay to de89 3704", "0044 0532 0130 00 today."),
    ],
)
@pytest.mark.parametrize("paragraphs", [(0, 0), (3, 4)])
def test_an_iban_wrapped_after_any_group_is_one_iban_and_no_phone(first, second, paragraphs):
    spans = find_spans(_page([first, second], paragraphs))
    assert [s.kind for s in spans] == ["iban", "iban"], spans
    assert "".join(s.text for s in spans).replace(" ", "").upper() == "DE89370400440532013000"
    assert counted(spans) == "1 IBAN"


def test_an_iban_over_three_lines_of_a_narrow_column():
    result = _page(["IBAN DE89 3704", "0044 0532", "0130 00 is ours"], (0, 1, 1))
    assert _found(result) == [
        ("iban", "DE89 3704", 0, False),
        ("iban", "0044 0532", 1, True),
        ("iban", "0130 00", 2, True),
    ]


def test_lines_far_apart_or_a_phone_across_paragraphs_are_not_joined():
    far = _page(["Card number 4111 1111", "1111 1111 expires soon."], (0, 1), gap=120)
    assert find_spans(far) == []
    # a phone's shape is too loose to join over a paragraph break; in one paragraph it is
    phone = ["Call us on +49 30", "1234567 any time"]
    assert find_spans(_page(phone, (0, 1))) == []
    assert [s.kind for s in find_spans(_page(phone, (0, 0)))] == ["phone", "phone"]


@pytest.mark.parametrize(
    "text", ["iban de89 3704 0044 0532 0130 00", "IBAN: gb82 west 1234 5698 7654 32"]
)
def test_an_iban_in_lower_case_is_found(text):
    assert [kind for kind, _ in kinds(text)] == ["iban"]
    assert kinds(text.replace("89", "88").replace("82", "83")) == []  # the checks still hold
