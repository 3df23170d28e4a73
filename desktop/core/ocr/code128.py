"""Code 128 barcodes, read along scanlines of a region OpenCV's barcode detector found.

OpenCV decodes only EAN/UPC (and may misread a Code 128 as a UPC-A), so a found region is
tried as Code 128 first: its start symbol and mod-103 checksum make a false read unlikely.
Screenshots show barcodes upright, so horizontal scanlines suffice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# Bar/space widths in modules of symbols 0..105 (each sums to 11), then the stop symbol.
_WIDTHS = (
    "212222 222122 222221 121223 121322 131222 122213 122312 132212 221213 221312 231212 "
    "112232 122132 122231 113222 123122 123221 223211 221132 221231 213212 223112 312131 "
    "311222 321122 321221 312212 322112 322211 212123 212321 232121 111323 131123 131321 "
    "112313 132113 132311 211313 231113 231311 112133 112331 132131 113123 113321 133121 "
    "313121 211331 231131 213113 213311 213131 311123 311321 331121 312113 312311 332111 "
    "314111 221411 431111 111224 111422 121124 121421 141122 141221 112214 112412 122114 "
    "122411 142112 142211 241211 221114 413111 241112 134111 111242 121142 121241 114212 "
    "124112 124211 411212 421112 421211 212141 214121 412121 111143 111341 131141 114113 "
    "114311 411113 411311 113141 114131 311141 411131 211412 211214 211232"
)
_PATTERNS = tuple(_WIDTHS.split())
_SYMBOLS = {pattern: value for value, pattern in enumerate(_PATTERNS)}
_STOP = "233111"  # the stop symbol's first six widths (its 7th is a 2-module bar)
_START_A, _START_B, _START_C = 103, 104, 105
_CODE_C, _CODE_B, _CODE_A, _SHIFT = 99, 100, 101, 98
SCANLINES = 7  # rows tried across the middle of the region


def read_code128(gray: np.ndarray, box: tuple[int, int, int, int]) -> str | None:
    """The text of a Code 128 symbol in `box` (left, top, right, bottom) of a grey page."""
    left, top, right, bottom = box
    margin = max(16, right - left)  # the detector may box only part of the bars
    left, right = max(0, left - margin), min(gray.shape[1], right + margin)
    for step in range(SCANLINES):
        row = top + (bottom - top) * (step + 2) // (SCANLINES + 3)
        text = _read_row(gray[row, left:right])
        if text is not None:
            return text
    return None


def _read_row(pixels: np.ndarray) -> str | None:
    dark = pixels < (int(pixels.min()) + int(pixels.max())) // 2
    runs = _run_lengths(dark.tolist())
    # Bars are dark runs: a symbol starts at a dark run, every other run from the first bar.
    for start in range(0, len(runs) - 6, 1):
        if not runs[start][0]:
            continue
        widths = [length for _dark, length in runs[start:]]
        values = _symbols(widths)
        if values is not None:
            return _text(values)
    return None


def _run_lengths(dark: list[bool]) -> list[tuple[bool, int]]:
    runs: list[tuple[bool, int]] = []
    for pixel in dark:
        if runs and runs[-1][0] == pixel:
            runs[-1] = (pixel, runs[-1][1] + 1)
        else:
            runs.append((pixel, 1))
    return runs


def _pattern(widths: list[int]) -> str | None:
    """Six run widths as a pattern of module counts, or None if they are not 11 modules."""
    module = sum(widths) / 11
    counts = [round(width / module) for width in widths]
    if sum(counts) != 11 or min(counts) < 1 or max(counts) > 4:
        return None
    return "".join(map(str, counts))


def _symbols(widths: list[int]) -> list[int] | None:
    """The symbol values from a start symbol to the checksum, when the checksum holds."""
    first = _SYMBOLS.get(_pattern(widths[:6]) or "")
    if first not in (_START_A, _START_B, _START_C):
        return None
    values = [first]
    for offset in range(6, len(widths) - 5, 6):
        pattern = _pattern(widths[offset : offset + 6])
        if pattern == _STOP:
            return _checked(values)
        if pattern is None or pattern not in _SYMBOLS:
            return None
        values.append(_SYMBOLS[pattern])
    return None


def _checked(values: list[int]) -> list[int] | None:
    if len(values) < 3:
        return None
    *data, check = values
    total = data[0] + sum(position * value for position, value in enumerate(data[1:], start=1))
    return data if total % 103 == check else None


def _text(values: list[int]) -> str:
    """Symbol values (start symbol first, checksum removed) as text, across code sets."""
    code_set = {_START_A: "A", _START_B: "B", _START_C: "C"}[values[0]]
    out: list[str] = []
    shifted = False
    for value in values[1:]:
        current = ("B" if code_set == "A" else "A") if shifted else code_set
        shifted = value == _SHIFT and current != "C"
        if current == "C" and value < 100:
            out.append(f"{value:02d}")
        elif value < 96:
            out.append(_character(value, current))
        else:
            code_set = _SWITCHES.get((current, value), code_set)
    return "".join(out)


# (code set, symbol) -> the code set it switches to; FNC1-4 and Shift carry no character.
_SWITCHES = {
    ("A", _CODE_C): "C",
    ("A", _CODE_B): "B",
    ("B", _CODE_C): "C",
    ("B", _CODE_A): "A",
    ("C", _CODE_B): "B",
    ("C", _CODE_A): "A",
}


def _character(value: int, code_set: str) -> str:
    if code_set == "B" or value < 64:
        return chr(value + 32)
    return chr(value - 64)  # set A: control characters
