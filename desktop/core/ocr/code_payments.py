"""Payment QR codes spelled out: the EPC's SEPA credit transfer (EPC069-12, "GiroCode") and
the Swiss QR-bill (SPC 0200, Swiss Implementation Guidelines 2.x). Both are one value a line
at fixed positions; an empty line is an empty value."""

from __future__ import annotations

Fields = tuple[tuple[str, str], ...]

_EPC_CHARSETS = {"1", "2", "3", "4", "5", "6", "7", "8"}
_SWISS_REFERENCES = {"QRR": "QR reference", "SCOR": "Creditor reference"}
_SWISS_LINES = 31  # up to the "EPD" trailer; bill information and alternatives may follow


def epc_fields(text: str) -> Fields:
    """BCD / version / charset / SCT / BIC / payee / IBAN / EUR amount / purpose /
    structured reference / remittance text / note to the payer."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    lines += [""] * (12 - len(lines))
    service, _version, charset, function, bic, payee, iban = lines[:7]
    amount, purpose, reference, remittance, note = lines[7:12]
    if service != "BCD" or charset not in _EPC_CHARSETS or function != "SCT" or not iban:
        return ()
    named = [
        ("Payee", payee),
        ("IBAN", format_iban(iban)),
        ("BIC", bic),
        ("Amount", _amount(amount[3:], amount[:3]) if amount else ""),
        ("Reference", reference),
        ("Message", remittance),
        ("Purpose", purpose),
        ("Note", note),
    ]
    return tuple((name, value) for name, value in named if value)


def swiss_fields(text: str) -> Fields:
    """SPC / 0200 / 1 / IBAN / creditor (type, name, 2 address lines, postcode, town,
    country) / ultimate creditor (7, unused) / amount / currency / debtor (7) / reference type
    / reference / message / EPD / bill information."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    if len(lines) < _SWISS_LINES - 1 or lines[0] != "SPC" or not lines[1].startswith("02"):
        return ()
    lines += [""] * (_SWISS_LINES + 1 - len(lines))
    iban, amount, currency = lines[3], lines[18], lines[19]
    reference_type, reference, message = lines[27], lines[28], lines[29]
    bill = lines[31] if len(lines) > 31 else ""
    named = [
        ("Payee", lines[5]),
        ("Payee address", _address(lines[4:11])),
        ("IBAN", format_iban(iban)),
        ("Amount", _amount(amount, currency) if amount else ""),
        ("Currency", "" if amount else currency),
        (_SWISS_REFERENCES.get(reference_type, "Reference"), reference),
        ("Message", message),
        ("Payer", lines[21]),
        ("Payer address", _address(lines[20:27])),
        ("Bill information", bill),
    ]
    return tuple((name, value) for name, value in named if value)


def _address(lines: list[str]) -> str:
    """A QR-bill address: type S (street, number, postcode, town) or K (two free lines)."""
    kind, _, first, second, postcode, town, country = lines
    if kind == "S":
        parts = [f"{first} {second}".strip(), f"{postcode} {town}".strip(), country]
    else:
        parts = [first, second, country]
    return ", ".join(part for part in parts if part)


def _amount(value: str, currency: str) -> str:
    return f"{currency} {value}".strip()


def format_iban(iban: str) -> str:
    """In groups of four as printed; a note when its check digits do not match (ISO 13616:
    the rearranged number mod 97 is 1), so a misread or altered code shows."""
    compact = iban.replace(" ", "").upper()
    grouped = " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return grouped if iban_is_valid(compact) else f"{grouped} (check digits do not match)"


def iban_is_valid(iban: str) -> bool:
    if len(iban) < 5 or not iban.isalnum() or not iban[:2].isalpha():
        return False
    digits = "".join(str(int(char, 36)) for char in iban[4:] + iban[:4])
    return int(digits) % 97 == 1
