"""Structured code payloads spelled out: a Wi-Fi QR as network and password, a vCard or MeCard
as contact fields, an EPC or Swiss payment QR as payee, IBAN, amount and reference, a GS1
code's application identifiers named (`code_payments.py`, `code_gs1.py`).

The raw text stays the code's `text`; a payload only adds named fields beside it. Standard
library only: the `desklens ocr` client renders results without the reader.
"""

from __future__ import annotations

import quopri
import re
from dataclasses import dataclass
from typing import Any

from desktop.core.ocr.code_gs1 import gs1_fields
from desktop.core.ocr.code_payments import epc_fields, swiss_fields

Fields = tuple[tuple[str, str], ...]

WIFI_SECURITY = {"WPA": "WPA/WPA2", "WPA2": "WPA2", "WPA3": "WPA3", "SAE": "WPA3", "WEP": "WEP",
                 "NOPASS": "none (open network)", "": "none (open network)"}  # fmt: skip
_WIFI = {"S": "Network", "P": "Password", "T": "Security", "H": "Hidden", "E": "EAP method",
         "I": "Identity", "A": "Anonymous identity", "PH2": "Phase 2"}  # fmt: skip
_MECARD = {"N": "Name", "SOUND": "Reading", "TEL": "Phone", "TEL-AV": "Video phone",
           "EMAIL": "Email", "ADR": "Address", "URL": "Website", "NOTE": "Note",
           "BDAY": "Birthday", "NICKNAME": "Nickname", "ORG": "Organization"}  # fmt: skip
_VCARD = {"FN": "Name", "N": "Name", "ORG": "Organization", "TITLE": "Title", "TEL": "Phone",
          "EMAIL": "Email", "ADR": "Address", "URL": "Website", "NOTE": "Note",
          "BDAY": "Birthday", "NICKNAME": "Nickname"}  # fmt: skip
_FOLDED = re.compile(r"\r?\n[ \t]")  # a vCard line continued on the next (RFC 6350 3.2)


@dataclass(frozen=True)
class Payload:
    """What a code's text means, field by field, in the order a reader wants them."""

    type: str  # "wifi", "contact", "payment", "gs1"
    fields: Fields  # (name, value): ("Network", "Home"), ("GTIN (01)", "04012345678901")

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "fields": [{"name": n, "value": v} for n, v in self.fields]}


def parse_payload(text: str, *, gs1: bool = False) -> Payload | None:
    """The structured payload in a code's text, None for plain text or a URL. `gs1`: the
    reader saw the code's FNC1 mark (its text is GS1 element strings)."""
    if gs1:
        fields = gs1_fields(text)
        return Payload("gs1", fields) if fields else None
    head = text[:12].upper()
    parsers = (("WIFI:", "wifi", wifi_fields), ("MECARD:", "contact", mecard_fields),
               ("BEGIN:VCARD", "contact", vcard_fields), ("BCD", "payment", epc_fields),
               ("SPC", "payment", swiss_fields))  # fmt: skip
    for prefix, kind, parse in parsers:
        if head.startswith(prefix):
            fields = parse(text)
            return Payload(kind, fields) if fields else None
    return None


def split_escaped(text: str, separator: str) -> list[str]:
    """`text` split at each `separator` not escaped by a backslash; escapes are kept (the
    parts are split again before `unescape`)."""
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current) + ("\\" if escaped else ""))
    return parts


def unescape(text: str) -> str:
    r"""Backslash escapes undone: `\;` -> `;`, `\\` -> `\`; vCard's `\n` is a line break."""
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) in "nN" else m.group(1), text)


def _key_values(body: str) -> list[tuple[str, str]]:
    """`K:v;K2:v2;;` (Wi-Fi, MeCard) as (KEY, value) pairs, values unescaped."""
    pairs = []
    for part in split_escaped(body, ";"):
        key, sep, value = part.partition(":")
        if sep:
            pairs.append((key.strip().upper(), unescape(value)))
    return pairs


def wifi_fields(text: str) -> Fields:
    """`WIFI:T:WPA;S:network;P:password;H:true;;` (ZXing's Wi-Fi format; `\\;` in values)."""
    fields = []
    for key, value in _key_values(text[len("WIFI:") :]):
        if key == "S" and len(value) > 1 and value[0] == value[-1] == '"':
            value = value[1:-1]  # quoted so that a hex-looking name stays text
        if key == "T":
            value = WIFI_SECURITY.get(value.upper(), value)
        if key == "H":
            value = "yes" if value.lower() == "true" else ""
        if key in _WIFI and value:
            fields.append((_WIFI[key], value))
    order = list(_WIFI.values())
    named = sorted(fields, key=lambda field: order.index(field[0]))
    return tuple(named) if any(name == "Network" for name, _ in named) else ()


def mecard_fields(text: str) -> Fields:
    """`MECARD:N:Doe,John;TEL:+41...;EMAIL:...;;` (NTT Docomo's contact format)."""
    fields = []
    for key, value in _key_values(text[len("MECARD:") :]):
        if key == "N":
            family, _, given = value.partition(",")
            value = f"{given.strip()} {family.strip()}".strip()
        if key in _MECARD and value:
            fields.append((_MECARD[key], value))
    return tuple(fields)


def vcard_fields(text: str) -> Fields:
    """vCard 2.1/3.0/4.0: a name (FN, else N), organisation, phones, emails, addresses, ...
    Phone and address types are kept: "Phone (work)"."""
    fields: list[tuple[str, str]] = []
    lines = _FOLDED.sub("", text).splitlines()
    has_fn = any(line.upper().startswith("FN") for line in lines)
    for line in lines:
        field = _vcard_field(line)
        if field is None or (field[0] == "N" and has_fn):
            continue
        key, types, value = field
        name = _VCARD[key] + (f" ({', '.join(types)})" if types and key in ("TEL", "ADR") else "")
        fields.append((name, value))
    return tuple(fields)


def _vcard_field(line: str) -> tuple[str, list[str], str] | None:
    head, sep, raw = line.partition(":")
    if not sep:
        return None
    name, *params = head.split(";")
    key = name.rsplit(".", 1)[-1].upper()  # "item1.TEL" is grouped: TEL
    if key not in _VCARD:
        return None
    upper = [param.upper() for param in params]
    if "ENCODING=QUOTED-PRINTABLE" in upper:  # vCard 2.1
        raw = quopri.decodestring(raw.encode("latin-1", "replace")).decode("utf-8", "replace")
    parts = [unescape(part).strip() for part in split_escaped(raw, ";")]
    if key == "N":  # family;given;additional;prefix;suffix
        parts = [*parts[3:4], *parts[1:3], *parts[:1], *parts[4:5]]
        value = " ".join(part for part in parts if part)
    elif key == "ADR":  # box;extended;street;town;region;postcode;country
        parts += [""] * (7 - len(parts))
        town = f"{parts[5]} {parts[3]}".strip()
        value = ", ".join(part for part in (*parts[:3], town, parts[4], *parts[6:]) if part)
    else:
        value = ", ".join(part for part in parts if part)
    types = [_type_name(param) for param in upper if _type_name(param)]
    return (key, types, value) if value else None


def _type_name(param: str) -> str:
    """TYPE=WORK,VOICE -> "work"; vCard 2.1's bare WORK too. Only the kinds people name."""
    values = param.split("=", 1)[-1].split(",")
    known = {"WORK": "work", "HOME": "home", "CELL": "mobile", "FAX": "fax"}
    return ", ".join(known[v.strip('"')] for v in values if v.strip('"') in known)
