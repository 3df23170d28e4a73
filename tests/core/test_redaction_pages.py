"""Redaction on rendered pages with the real OCR (issue 49): the private items are filled so
that our OCR reads none of them back, every other word is still read, and no pixel outside
the filled boxes changes.

HELD_OUT is the issue's "held-out page" (e-mail, IBAN and card number): its seed was chosen
before the placement was tuned and never rendered while tuning (the tuning used seeds 1-69 of
`devkit.redaction_pages.page`); it is a test of its own so that its result is reported apart.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from desktop.core.images import load_image
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.privacy.patterns import compile_pattern
from desktop.core.privacy.redact import FILL, Redaction, redact_page
from devkit import redaction_pages

HELD_OUT = 4901
TUNED = (3, 11, 17, 26, 38, 52)


@pytest.fixture(scope="module")
def ocr():
    return OcrEngine()


def _plain(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).casefold()


def _words(text: str) -> list[str]:
    # the recognizer may read a fill's edge as "[", "|" or "_" beside a kept word
    return [w.strip("[]|_") for w in text.split() if w.strip("[]|_")]


def check(ocr, page, redaction: Redaction) -> None:
    """The three promises: none read back, every other word read, nothing else changed."""
    again = ocr.extract(redaction.image).text()
    for kind, value in page.private:
        assert _plain(value) not in _plain(again), f"{kind} {value!r} is still read"
    before = ocr.extract(page.image)
    lines = "\n".join(line.text for line in redaction.result.lines)
    kept = _words(re.sub(r"\[(?:email|iban|card|phone|custom)\]", " ", lines))
    assert kept, "the page had other words"
    read = set(_words(again))
    lost = [word for word in kept if word not in read]
    assert not lost, f"words lost: {lost} (read before: {before.text()!r})"
    original = np.asarray(page.image.convert("RGB"))
    redacted = np.asarray(redaction.image)
    inside = np.zeros(original.shape[:2], bool)
    for span in redaction.spans:
        for left, top, right, bottom in span.boxes:
            inside[top:bottom, left:right] = True
    assert np.array_equal(original[~inside], redacted[~inside])
    assert (redacted[inside] == FILL).all()
    assert redaction.outcome == "redacted" and not redaction.leaks


@pytest.mark.parametrize("seed", TUNED)
def test_tuned_pages(ocr, seed):
    page = redaction_pages.page(seed)
    redaction = redact_page(ocr.extract, load_image(page.image, name=f"page {seed}"))
    assert sorted(s.kind for s in redaction.spans) == sorted(k for k, _ in page.private)
    check(ocr, page, redaction)
    assert redaction.summary("out.png") == (
        "Redacted 4 items (1 e-mail, 1 IBAN, 1 card number, 1 phone number) → out.png."
    )


def test_held_out_page(ocr):
    page = redaction_pages.page(HELD_OUT, kinds=("email", "iban", "card"))
    redaction = redact_page(ocr.extract, load_image(page.image, name="held-out"))
    assert sorted(s.kind for s in redaction.spans) == ["card", "email", "iban"]
    check(ocr, page, redaction)


@pytest.mark.parametrize(("seed", "rules"), [(1, "grid"), (2, "rows"), (3, "none")])
def test_table_cells(ocr, seed, rules):
    page = redaction_pages.table_page(seed, rules)
    redaction = redact_page(ocr.extract, load_image(page.image, name="table"))
    check(ocr, page, redaction)
    rows = [row for table in redaction.result.tables for row in table.rows]
    assert sum(row.count("[email]") for row in rows) == 3
    assert sum(row.count("[iban]") for row in rows) == 3


def test_qr_code_holding_an_email_is_filled_whole(ocr):
    page = redaction_pages.code_page("mailto:anna.schmidt@example.com")
    redaction = redact_page(ocr.extract, load_image(page.image, name="code"))
    assert [(s.kind, s.code) for s in redaction.spans] == [("email", 0)]
    assert "QR: mailto:[email]" in redaction.result.text()
    assert ocr.extract(redaction.image).codes == []
    check(ocr, page, redaction)


def test_user_pattern_on_a_page(ocr):
    image = render_lines(["Project FALCON-7 starts on Monday", "Budget approved by the board"])
    pattern = compile_pattern(r"FALCON-\d+")
    redaction = redact_page(ocr.extract, load_image(image, name="plan"), [pattern])
    assert [s.kind for s in redaction.spans] == ["custom"]
    again = ocr.extract(redaction.image).text()
    assert "FALCON" not in again and "Project" in again and "Monday" in again
    assert redaction.result.text().splitlines()[0] == "Project [custom] starts on Monday"


def test_clean_page_says_so(ocr):
    image = render_lines(
        [
            "Meeting notes for Tuesday",
            "Invoice INV-2024-00731 dated 2024-03-15",
            "Total 1,284.50 EUR",
        ]
    )
    redaction = redact_page(ocr.extract, load_image(image, name="notes"))
    assert redaction.outcome == "clean" and redaction.spans == ()
    assert redaction.summary() == (
        "Nothing to redact: the OCR read 3 lines and found no e-mail, IBAN, card or phone number."
    )
    assert redaction.image is not None and np.array_equal(
        np.asarray(redaction.image.convert("RGB")), np.asarray(image.convert("RGB"))
    )


def test_blank_page_says_it_could_not_read(ocr):
    from PIL import Image

    redaction = redact_page(ocr.extract, load_image(Image.new("RGB", (400, 300), "white")))
    assert redaction.outcome == "unreadable"
    assert redaction.summary().startswith("Could not read any text on this page: nothing was")


def _reader(texts_by_call):
    """A stand-in OCR: call n reads the line texts_by_call[n] (the last one from then on)."""
    from desktop.core.ocr.models import OcrLine, OcrResult

    calls = []

    def read(image):
        text = texts_by_call[min(len(calls), len(texts_by_call) - 1)]
        calls.append(image)
        lines = [OcrLine(text, (24, 20, 420, 44), 0.99, 0)] if text else []
        return OcrResult(lines, image.size[0], image.size[1], 0.0)

    return read, calls


def test_a_value_read_back_gets_its_whole_line_filled_then_is_reported():
    image = render_lines(["Mail jo.doe@example.com now"], size=18, width=460)
    line = "Mail jo.doe@example.com now"
    read, calls = _reader([line, line, ""])  # still read after the first filling only
    redaction = redact_page(read, load_image(image))
    assert len(calls) == 3 and redaction.outcome == "redacted"
    [span] = redaction.spans
    assert span.estimated and span.boxes[-1] == (18, 14, 426, 50)  # the line, grown
    pixels = np.asarray(redaction.image)
    assert (pixels[14:50, 18:426] == FILL).all()

    read, calls = _reader([line])  # read whatever is filled: a leak, said
    redaction = redact_page(read, load_image(image))
    assert len(calls) == 3 and redaction.outcome == "leaked"
    assert redaction.summary() == (
        "Not redacted safely: the OCR still reads jo…om (email) on the filled page; "
        "nothing was saved."
    )


def test_an_item_wrapped_over_two_lines_is_filled_on_both_and_counted_once(ocr):
    image = render_lines(
        ["Write to our office at anna.schmidt@exam-", "ple.com or visit us on Monday.",
         "IBAN DE89 3704 0044 0532", "0130 00 is our account."],
        size=18, width=520,
    )  # fmt: skip
    redaction = redact_page(ocr.extract, load_image(image, name="wrapped"))
    assert [(s.kind, s.text, s.continues) for s in redaction.spans] == [
        ("email", "anna.schmidt@exam-", False),
        ("email", "ple.com", True),
        ("iban", "DE89 3704 0044 0532", False),
        ("iban", "0130 00", True),
    ]
    assert redaction.summary() == "Redacted 2 items (1 e-mail, 1 IBAN)."
    assert redaction.result.text().splitlines() == [
        "Write to our office at [email]", "[email] or visit us on Monday.",
        "IBAN [iban]", "[iban] is our account.",
    ]  # fmt: skip
    again = _plain(ocr.extract(redaction.image).text())
    assert "schmidt" not in again and "0532" not in again and "monday" in again


def test_a_piece_read_where_the_value_was_filled_is_a_read_back():
    """As on the benchmark's terminal page: the OCR read a word twice, the line's words no
    longer matched its ink one to one, and the box fell a word off: "priya" stayed."""
    from desktop.core.ocr.models import OcrLine, OcrResult
    from desktop.core.privacy.models import Span
    from desktop.core.privacy.redact import read_back

    line = "at 10:01:53 10:01:53 for priya@example.com budget on"
    span = Span("email", "priya@example.com", 0, 25, 42, boxes=((300, 818, 420, 832),))
    assert line[25:42] == "priya@example.com"

    def page(text, top=817):
        return OcrResult([OcrLine(text, (3, top, 933, top + 16), 0.9, 0)], 1000, 900, 0.0)

    assert read_back(span, page("at 10:01:53 for priya on"), line)
    assert not read_back(span, page("at 10:01:53 for budget on"), line)
    assert not read_back(span, page("at 10:01:53 for priya on", top=600), line)  # elsewhere
    # a piece that is also a word of the line outside the value says nothing
    other = "Dear priya, write to priya@example.com"
    start = other.index("priya@")
    named = replace(span, start=start, end=start + len(span.text))
    assert not read_back(named, page("Dear priya, write to"), other)


def test_an_item_the_first_read_garbled_is_tagged_where_a_later_round_filled_it():
    """The tagged text stands for the filled pixels (the app grounds answers and sends text
    with it): an e-mail the first read garbled ("example,com": no e-mail), which the read-back
    found once the IBAN beside it was filled, must not stay in it."""
    line = "IBAN DE89 3704 0044 0532 0130 00 mail jo.doe@example.com"
    image = render_lines([line], size=18, width=760)
    garbled, without_iban = line.replace(".com", ",com"), "IBAN mail jo.doe@example.com"
    read, calls = _reader([garbled, without_iban, "IBAN mail"])
    redaction = redact_page(read, load_image(image))
    assert len(calls) == 3 and redaction.outcome == "redacted"
    assert sorted(s.kind for s in redaction.spans) == ["email", "iban"]
    text = redaction.result.text()
    assert "example" not in text and "jo.doe" not in text and "0532" not in text, text
    assert text.startswith("IBAN [iban]") and "[email]" in text, text
