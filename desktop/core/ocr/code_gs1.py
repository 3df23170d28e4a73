"""GS1 element strings named: "(01)04012345678901(17)271231(10)ABC12" or the raw form the
symbol carries ("0104012345678901172712311" + "0ABC12", a GS (FNC1) after each variable-length
value but the last) -> GTIN, expiry date, batch/lot, ... (GS1 General Specifications 3.2,
their predefined lengths in 7.8.5; the AIs a label or a medicine pack usually carries)."""

from __future__ import annotations

import datetime
import re

Fields = tuple[tuple[str, str], ...]

GS = "\x1d"
_SYMBOLOGY = re.compile(r"^\][A-Za-z]\d")  # "]d2", "]C1", "]Q3": a scanner's prefix
_PAREN_AI = re.compile(r"\((\d{2,4})\)")
_DATE = "date"
# AI -> (name, data length, 0 when variable: it ends at a GS or the end, value kind)
AIS: dict[str, tuple[str, int, str]] = {
    "00": ("SSCC", 18, ""),
    "01": ("GTIN", 14, ""),
    "02": ("Content GTIN", 14, ""),
    "10": ("Batch/lot", 0, ""),
    "11": ("Production date", 6, _DATE),
    "12": ("Due date", 6, _DATE),
    "13": ("Packaging date", 6, _DATE),
    "15": ("Best before", 6, _DATE),
    "16": ("Sell by", 6, _DATE),
    "17": ("Expiry", 6, _DATE),
    "20": ("Variant", 2, ""),
    "21": ("Serial", 0, ""),
    "22": ("Consumer product variant", 0, ""),
    "30": ("Count", 0, ""),
    "37": ("Count of units", 0, ""),
    "240": ("Additional product ID", 0, ""),
    "241": ("Customer part number", 0, ""),
    "250": ("Secondary serial", 0, ""),
    "400": ("Order number", 0, ""),
    "401": ("Consignment", 0, ""),
    "402": ("Shipment ID", 17, ""),
    "410": ("Ship to (GLN)", 13, ""),
    "414": ("Location (GLN)", 13, ""),
    "420": ("Ship to postcode", 0, ""),
    "422": ("Country of origin", 3, ""),
    "710": ("National product code (DE, PZN)", 0, ""),
    "711": ("National product code (FR, CIP)", 0, ""),
    "712": ("National product code (ES)", 0, ""),
    "713": ("National product code (BR)", 0, ""),
    "714": ("National product code (PT)", 0, ""),
    "7003": ("Expiry date and time", 10, ""),
    "8004": ("GIAI", 0, ""),
    "90": ("Internal", 0, ""),
    **{str(ai): ("Company internal", 0, "") for ai in range(91, 100)},
}
# Measures: a 4-digit AI whose last digit is where the decimal point goes; 6 digits.
_MEASURES = {
    "310": "Net weight (kg)",
    "311": "Length (m)",
    "312": "Width (m)",
    "313": "Height (m)",
    "314": "Area (m²)",
    "315": "Net volume (l)",
    "316": "Net volume (m³)",
    "320": "Net weight (lb)",
    "330": "Gross weight (kg)",
}
_PRICES = {"392": "Amount payable", "393": "Amount payable"}  # 393n: ISO 4217 code first
_CURRENCIES = {"978": "EUR", "756": "CHF", "840": "USD", "826": "GBP", "752": "SEK"}


def gs1_fields(text: str) -> Fields:
    """The named element strings, () when `text` is not GS1 data DeskLens can split."""
    data = _SYMBOLOGY.sub("", text).lstrip(GS)
    pairs = _paren_pairs(data) if data.startswith("(") else _raw_pairs(data)
    if not pairs:
        return ()
    return tuple((f"{_name(ai)} ({ai})", _value(ai, value)) for ai, value in pairs)


def _paren_pairs(data: str) -> list[tuple[str, str]]:
    marks = list(_PAREN_AI.finditer(data))
    if not marks or marks[0].start() != 0:
        return []
    ends = [mark.start() for mark in marks[1:]] + [len(data)]
    return [(mark.group(1), data[mark.end() : end]) for mark, end in zip(marks, ends, strict=True)]


def _raw_pairs(data: str) -> list[tuple[str, str]]:
    """Split at the predefined lengths; a variable-length value ends at a GS. An unknown AI
    ends the split: its length cannot be known, so nothing is claimed."""
    pairs, at = [], 0
    while at < len(data):
        ai = _ai_at(data, at)
        if ai is None:
            return []
        start = at + len(ai)
        length = _length(ai)
        end = start + length if length else _next_gs(data, start)
        value = data[start:end]
        if not value or GS in value or (length and len(value) != length):
            return []
        pairs.append((ai, value))
        at = end + 1 if data[end : end + 1] == GS else end
    return pairs


def _ai_at(data: str, at: int) -> str | None:
    for size in (2, 3):
        if data[at : at + size] in AIS:
            return data[at : at + size]
    four = data[at : at + 4]
    if len(four) == 4 and four.isdigit() and (four in AIS or four[:3] in _MEASURES | _PRICES):
        return four
    return None


def _length(ai: str) -> int:
    if ai in AIS:
        return AIS[ai][1]
    return 6 if ai[:3] in _MEASURES else 0


def _next_gs(data: str, start: int) -> int:
    end = data.find(GS, start)
    return len(data) if end < 0 else end


def _name(ai: str) -> str:
    if ai in AIS:
        return AIS[ai][0]
    return _MEASURES.get(ai[:3]) or _PRICES.get(ai[:3]) or "AI"


def _value(ai: str, value: str) -> str:
    if ai in AIS:
        return gs1_date(value) if AIS[ai][2] == _DATE else value
    decimals = int(ai[3]) if len(ai) == 4 and ai[3].isdigit() else 0
    currency = ""
    if ai[:3] == "393" and len(value) > 3:
        code, value = value[:3], value[3:]
        currency = _CURRENCIES.get(code, f"currency {code}") + " "
    if (ai[:3] in _MEASURES or ai[:3] in _PRICES) and value.isdigit() and decimals:
        whole = value[:-decimals].lstrip("0") or "0"
        value = f"{whole}.{value[-decimals:].rjust(decimals, '0')}"
    return currency + value


def gs1_date(value: str, today: datetime.date | None = None) -> str:
    """YYMMDD as an ISO date; day 00 is the month's end ("2027-12"). The century follows
    GS1's sliding window (7.12): up to 50 years ahead, else the past century."""
    if len(value) != 6 or not value.isdigit():
        return value
    year, month, day = int(value[:2]), int(value[2:4]), int(value[4:])
    current = (today or datetime.date.today()).year
    century = current // 100 * 100
    difference = year - current % 100
    if difference >= 51:
        century -= 100
    elif difference <= -50:
        century += 100
    if not 1 <= month <= 12:
        return value
    return f"{century + year:04d}-{month:02d}" + (f"-{day:02d}" if day else "")
