"""A dash read as a dot is told apart by its ink; real full stops stay (issue 36: the INT8
recognizer read a lone "-" in a table cell as "." where FP32 read "-")."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from desktop.core.ocr.marks import dashes_settled
from devkit.table_pages import face


def rendered(
    parts: list[tuple[int, str]], family: str, size: int = 15
) -> tuple[np.ndarray, np.ndarray]:
    """A line crop of `parts` (left x, text) and the crop column of each character's middle,
    as the recognizer's CTC steps give them."""
    used = face(family, size)
    width = max(x + int(used.getlength(text)) for x, text in parts) + 8
    image = Image.new("RGB", (width, size + 9), "white")
    draw = ImageDraw.Draw(image)
    columns = []
    for x, text in parts:
        draw.text((x, 4), text, font=used, fill=(20, 20, 20))
        for i in range(len(text)):
            columns.append(x + (used.getlength(text[:i]) + used.getlength(text[: i + 1])) / 2)
    return np.array(image)[:, :, ::-1].copy(), np.array(columns, np.float32)


@pytest.mark.parametrize("family", ["serif", "narrow", "noto"])
def test_a_lone_dash_beside_a_digit_read_as_a_dot_becomes_a_dash(family: str) -> None:
    crop, columns = rendered([(6, "1"), (34, "-")], family)
    assert dashes_settled(crop, "1.", columns) == "1-"


@pytest.mark.parametrize("family", ["serif", "narrow", "noto"])
@pytest.mark.parametrize("text", ["8.1%", "2,418.60", "Invoice no.", "v0.2 ok."])
def test_full_stops_on_the_baseline_stay(family: str, text: str) -> None:
    crop, columns = rendered([(6, text)], family)
    assert dashes_settled(crop, text, columns) == text


def test_a_dash_inside_a_word_is_left_to_the_model() -> None:
    # Against a word a raised dot could be a middle dot or a hyphen: not ours to decide.
    crop, columns = rendered([(6, "e-mail")], "serif")
    assert dashes_settled(crop, "e.mail", columns) == "e.mail"


def test_a_crop_of_a_dash_alone_and_of_a_dot_alone() -> None:
    dash, _ = rendered([(6, "—")], "serif", 20)
    dot, _ = rendered([(6, ".")], "serif", 20)
    assert dashes_settled(dash, ".", None) == "-"
    assert dashes_settled(dot, ".", None) == "."


def test_small_print_is_not_measured() -> None:
    crop, columns = rendered([(6, "1"), (20, "-")], "serif", 8)
    assert dashes_settled(crop, "1.", columns) == "1."


def test_a_blank_crop_changes_nothing() -> None:
    blank = np.full((24, 60, 3), 255, np.uint8)
    assert dashes_settled(blank, ".", None) == "."
    assert dashes_settled(blank, "1.", np.array([10.0, 30.0], np.float32)) == "1."


def test_a_table_cells_rules_in_the_crop_are_not_a_dash() -> None:
    # A ruled table's cell crop held its grey top and left rules: as one blob with the text
    # they were "a lone bar", and "$93.70" became "$93-70".
    crop, columns = rendered([(8, "$93.70")], "condensed")
    crop[0:2, :] = 170
    crop[:, 0:2] = 170
    assert dashes_settled(crop, "$93.70", columns) == "$93.70"
    assert dashes_settled(crop[:, :, 0].copy(), "$93.70", columns) == "$93.70"
