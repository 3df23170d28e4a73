"""Pages with private data drawn at known places, for the redaction tests (issue 49): e-mail
addresses, IBANs with valid check digits, card numbers passing Luhn and phone numbers among
ordinary words, in the OCR benchmark's faces. `page(seed)` is deterministic."""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

from PIL import Image

from desktop.core.ocr.rendered_pages import Page, font

FACES = ("sans", "serif", "arial", "mono")
FIRST = ("anna", "jonas", "maria", "peter", "lena", "tom", "sofia", "ben", "clara", "emil")
LAST = ("schmidt", "meyer", "novak", "rossi", "dubois", "larsen", "weber", "brown")
DOMAINS = ("example.com", "mail.example.org", "firma-test.de", "post.example.net")
FILLER = (
    "Please review the attached statement before the end of the month",
    "The delivery was scheduled for Tuesday morning at the warehouse",
    "Thank you for your order and your patience during the holidays",
    "Questions about this invoice can be sent to our support team",
    "Payment is due within thirty days of the invoice date",
    "Total amount 1,284.50 EUR including 19% VAT",
    "Invoice INV-2024-00731 dated 2024-03-15",
    "Reference number 48213977 for your records",
)
IBAN_BANKS = {"DE": 18, "GB": 18, "FR": 23, "NL": 14, "AT": 16}  # BBAN lengths


@dataclass
class RedactionPage:
    image: Image.Image
    private: list[tuple[str, str]] = field(default_factory=list)  # (kind, text as drawn)
    lines: list[str] = field(default_factory=list)  # every line drawn, in order


def iban(rng: random.Random, country: str) -> str:
    """A random IBAN of the country with correct check digits, grouped in fours."""
    length = IBAN_BANKS[country]
    if country in ("GB", "NL"):
        bban = "".join(rng.choice(string.ascii_uppercase) for _ in range(4))
        bban += "".join(rng.choice(string.digits) for _ in range(length - 4))
    else:
        bban = "".join(rng.choice(string.digits) for _ in range(length))
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(digits) % 97
    compact = f"{country}{check:02d}{bban}"
    return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))


def card(rng: random.Random) -> str:
    """A 16-digit Visa or Mastercard number passing Luhn, in groups of four."""
    body = rng.choice(("4", "51", "52", "55"))
    body += "".join(rng.choice(string.digits) for _ in range(15 - len(body)))
    total = 0
    for number, char in enumerate(reversed(body)):
        value = int(char) * (1 if number % 2 else 2)
        total += value - 9 if value > 9 else value
    full = body + str((10 - total % 10) % 10)
    return " ".join(full[i : i + 4] for i in range(0, 16, 4))


def email(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)}.{rng.choice(LAST)}@{rng.choice(DOMAINS)}"


def phone(rng: random.Random) -> str:
    digits = lambda n: "".join(rng.choice(string.digits) for _ in range(n))  # noqa: E731
    return rng.choice(
        (
            f"+49 30 {digits(7)}",
            f"+44 20 {digits(4)} {digits(4)}",
            f"+1 555 {digits(3)} {digits(4)}",
        )
    )


def page(
    seed: int, *, kinds: tuple[str, ...] = ("email", "iban", "card", "phone")
) -> RedactionPage:
    """A letter-like page: a heading, filler lines, then each private item on a labelled line
    in a random order, more filler; face and size drawn from the seed."""
    rng = random.Random(seed)
    face_name, size = rng.choice(FACES), rng.choice((15, 16, 18, 20))
    face = font(face_name, size)
    makers = {
        "email": ("E-mail:", email),
        "iban": ("IBAN:", lambda r: iban(r, r.choice(sorted(IBAN_BANKS)))),
        "card": ("Card number:", card),
        "phone": ("Phone:", phone),
    }
    items = [(kind, *makers[kind]) for kind in kinds]
    rng.shuffle(items)
    lines = [f"Account summary for {rng.choice(FIRST).title()} {rng.choice(LAST).title()}"]
    lines += rng.sample(FILLER, 2)
    private = []
    for kind, label, make in items:
        value = make(rng)
        private.append((kind, value))
        lines.append(f"{label} {value}")
    lines += rng.sample([f for f in FILLER if f not in lines], 2)
    step = round(size * 1.7)
    drawn = Page(
        40 + max(round(face.getlength(line)) for line in lines) + 40, 60 + step * len(lines)
    )
    for number, line in enumerate(lines):
        drawn.text(40, 30 + number * step, line, face)
    return RedactionPage(drawn.image, private, lines)


def table_page(seed: int, rules: str = "grid", family: str = "condensed") -> RedactionPage:
    """A customer table: name, e-mail, IBAN and an amount per row, drawn as devkit's tables."""
    from devkit.table_pages import Column, Look, draw_table

    rng = random.Random(seed)
    body, private = [], []
    for _ in range(3):
        row = [
            f"{rng.choice(FIRST).title()} {rng.choice(LAST).title()}",
            email(rng),
            iban(rng, rng.choice(("DE", "AT"))),
            f"{rng.randint(10, 999)}.{rng.randint(10, 99)}",
        ]
        private += [("email", row[1]), ("iban", row[2])]
        body.append(row)
    columns = [
        Column("Name", 170),
        Column("E-mail", 300),
        Column("IBAN", 300),
        Column("Amount", 110, "right"),
    ]
    drawn = Page(940, 220)
    drawn.text(30, 20, "Customers and their accounts", font("sans", 18))
    draw_table(drawn, 30, 60, columns, body, Look(family, 15, rules=rules))  # type: ignore[arg-type]
    lines = [
        "Customers and their accounts",
        "Name E-mail IBAN Amount",
        *(" ".join(r) for r in body),
    ]
    return RedactionPage(drawn.image, private, lines)


def code_page(content: str = "mailto:anna.schmidt@example.com") -> RedactionPage:
    """A line of text beside a QR code that holds `content`."""
    import numpy as np
    import zxingcpp

    drawn = Page(520, 220)
    drawn.text(30, 30, "Scan the code to write to us", font("sans", 18))
    symbol = zxingcpp.create_barcode(content, zxingcpp.BarcodeFormat.QRCode)
    code = np.asarray(zxingcpp.write_barcode_to_image(symbol, scale=5))
    drawn.image.paste(Image.fromarray(code).convert("RGB"), (330, 40))
    return RedactionPage(drawn.image, [("email", content)], ["Scan the code to write to us"])
