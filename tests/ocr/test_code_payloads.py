"""Structured code payloads spelled out, on real-shaped payloads: Wi-Fi (escaped `;`), vCard
3.0 and 2.1, MeCard, the EPC069-12 SEPA transfer, the Swiss QR-bill (SPC 0200) and GS1 element
strings (raw with FNC1/GS separators, and the "(01)..." form); what is not one of them, or is
cut short, gives no payload rather than wrong fields."""

from __future__ import annotations

import datetime

import pytest
from code_images import EPC, MECARD, SWISS, VCARD, WIFI

from desktop.core.ocr.code_gs1 import gs1_date, gs1_fields
from desktop.core.ocr.code_payloads import parse_payload
from desktop.core.ocr.code_payments import format_iban, iban_is_valid


def fields(text: str, *, gs1: bool = False) -> dict[str, str]:
    payload = parse_payload(text, gs1=gs1)
    assert payload is not None
    return dict(payload.fields)


def test_wifi_with_escaped_separators() -> None:
    assert parse_payload(WIFI).type == "wifi"
    assert fields(WIFI) == {"Network": "Cafe Guest;5G", "Password": "pa;ss:w0rd\\x",
                            "Security": "WPA/WPA2", "Hidden": "yes"}  # fmt: skip
    assert fields('WIFI:S:"cafe";T:nopass;;') == {"Network": "cafe",
                                                  "Security": "none (open network)"}  # fmt: skip
    assert fields("wifi:P:x;S:Home;;")["Network"] == "Home"  # any order, any case of the scheme
    assert parse_payload("WIFI:T:WPA;P:secret;;") is None  # no network: nothing to spell out


def test_vcard_3() -> None:
    assert parse_payload(VCARD).type == "contact"
    assert fields(VCARD) == {
        "Name": "Dr. Anna Muster",
        "Organization": "Example AG, Research",
        "Title": "Head of Imaging",
        "Phone (work)": "+41 44 668 18 00",
        "Phone (mobile)": "+41 79 555 01 23",
        "Email": "anna.muster@example.ch",
        "Address (work)": "Bahnhofstrasse 1, 8001 Zürich, Switzerland",
        "Website": "https://example.ch",
        "Note": "Office hours 9-17, Mon-Fri",
    }


def test_vcard_without_fn_folded_and_quoted_printable() -> None:
    card = ("BEGIN:VCARD\nVERSION:2.1\nN:Muster;Anna\nitem1.EMAIL:anna@exa\n mple.ch\n"
            "NOTE;ENCODING=QUOTED-PRINTABLE;CHARSET=UTF-8:Gr=C3=BC=C3=9Fe\nEND:VCARD")  # fmt: skip
    assert fields(card) == {"Name": "Anna Muster", "Email": "anna@example.ch", "Note": "Grüße"}


def test_mecard() -> None:
    assert fields(MECARD) == {"Name": "Anna Muster", "Phone": "+41446681800",
                              "Email": "anna@example.ch", "Address": "Zürich, CH"}  # fmt: skip


def test_epc_sepa_credit_transfer() -> None:
    assert fields(EPC) == {"Payee": "Red Cross of Belgium", "IBAN": "BE72 0000 0000 1616",
                           "BIC": "BPOTBEB1", "Amount": "EUR 1", "Message": "Urgency fund",
                           "Purpose": "CHAR", "Note": "Sample EPC QR code"}  # fmt: skip
    lines = ["BCD", "001", "1", "SCT", "", "Shop", "DE89370400440532013000", "EUR12.5", "",
             "RF18539007547034"]  # fmt: skip
    assert fields("\r\n".join(lines)) == {
        "Payee": "Shop",
        "IBAN": "DE89 3704 0044 0532 0130 00",
        "Amount": "EUR 12.5",
        "Reference": "RF18539007547034",
    }
    assert parse_payload("BCD\n002\n1\nSCT\nBIC\nShop\n") is None  # no IBAN
    assert parse_payload("BCD\n002\n1\nINST\n\nShop\nBE72000000001616") is None  # not SCT


def test_swiss_qr_bill() -> None:
    assert fields(SWISS) == {
        "Payee": "Robert Schneider AG",
        "Payee address": "Rue du Lac 1268, 2501 Biel, CH",
        "IBAN": "CH44 3199 9123 0008 8901 2",
        "Amount": "CHF 1949.75",
        "QR reference": "210000000003139471430009017",
        "Message": "Order of 15 June 2020",
        "Payer": "Pia-Maria Rutschmann-Schnyder",
        "Payer address": "Grosse Marktgasse 28, 9400 Rorschach, CH",
        "Bill information": SWISS.rsplit("\n", 1)[1],
    }
    open_amount = SWISS.replace("1949.75", "").replace("\nQRR\n", "\nNON\n")
    assert fields(open_amount)["Currency"] == "CHF" and "Amount" not in fields(open_amount)
    assert parse_payload("\n".join(SWISS.split("\n")[:12])) is None  # cut short
    assert parse_payload(SWISS.replace("0200", "0100", 1)) is None  # an older version


def test_iban_check_digits() -> None:
    assert iban_is_valid("CH9300762011623852957") and iban_is_valid("GB82WEST12345698765432")
    assert not iban_is_valid("CH9300762011623852958")
    assert format_iban("ch93 0076 2011 6238 5295 8").endswith("(check digits do not match)")


GS = "\x1d"


@pytest.mark.parametrize(
    "data",
    [
        f"]d201040123456789011727123110ABC12{GS}21SN-0042",  # scanner prefix, GS after a lot
        f"{GS}01040123456789011727123110ABC12{GS}21SN-0042",  # a leading FNC1
        "(01)04012345678901(17)271231(10)ABC12(21)SN-0042",  # the human-readable form
    ],
)
def test_gs1_element_strings_are_named(data: str) -> None:
    assert parse_payload(data, gs1=True).type == "gs1"
    assert fields(data, gs1=True) == {
        "GTIN (01)": "04012345678901",
        "Expiry (17)": "2027-12-31",
        "Batch/lot (10)": "ABC12",
        "Serial (21)": "SN-0042",
    }


def test_gs1_measures_prices_and_pharma_codes() -> None:
    data = f"0104012345678901310300125039329781250{GS}7101234567890{GS}17270200"
    assert gs1_fields(data) == (
        ("GTIN (01)", "04012345678901"),
        ("Net weight (kg) (3103)", "1.250"),
        ("Amount payable (3932)", "EUR 12.50"),
        ("National product code (DE, PZN) (710)", "1234567890"),
        ("Expiry (17)", "2027-02"),  # day 00: the month's end
    )


def test_gs1_that_cannot_be_split_claims_nothing() -> None:
    assert gs1_fields("0112345") == ()  # a GTIN cut short
    assert gs1_fields("9912" + GS + "8299abc") == ()  # an AI this table does not know
    assert parse_payload("(01)04012345678901", gs1=False) is None  # not marked GS1: plain text
    assert gs1_fields("hello") == ()


def test_gs1_dates_follow_the_sliding_century_window() -> None:
    today = datetime.date(2026, 12, 1)
    assert gs1_date("271231", today) == "2027-12-31"
    assert gs1_date("760101", today) == "2076-01-01"  # 50 years ahead: still this century
    assert gs1_date("770101", today) == "1977-01-01"  # 51 ahead: the past one
    assert gs1_date("271331", today) == "271331"  # no month 13: left as it was


@pytest.mark.parametrize("text", ["https://example.org", "hello", "", "BCD", "SPC", "WIFI:",
                                  "MECARD:", "BEGIN:VCARD\nEND:VCARD"])  # fmt: skip
def test_plain_text_and_empty_shells_have_no_payload(text: str) -> None:
    assert parse_payload(text) is None


def test_a_codes_control_and_bidi_characters_are_shown_in_text_and_kept_in_json() -> None:
    from desktop.core.ocr.code_payloads import parse_payload
    from desktop.core.ocr.codes import OcrCode, codes_block

    tricky = "invoice\u202efdp.exe\x1b[2J"
    wifi = "WIFI:T:WPA;S:Home\u202e;P:pa\x07ss;;"
    codes = [OcrCode("QR", tricky, (0, 0, 9, 9)),
             OcrCode("QR", wifi, (0, 20, 9, 29), payload=parse_payload(wifi))]  # fmt: skip
    for markdown in (False, True):
        block = codes_block(codes, markdown=markdown)
        assert "\u202e" not in block and "\x1b" not in block and "\x07" not in block
        assert r"QR: invoice\u202efdp.exe\x1b[2J" in block
        assert r"Home\u202e" in block
    assert codes[0].to_dict()["text"] == tricky  # the data as decoded
