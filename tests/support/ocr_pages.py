"""Pages the OCR tests of several layers read (tests/ocr, tests/gui): a ruled table with
known cells, drawn with the app's own page renderer's fonts."""

from __future__ import annotations

from PIL import Image, ImageDraw

from desktop.core.ocr.rendered_pages import font

TABLE = [
    ["Product", "Units", "Price"],
    ["Keyboard", "12", "49.90"],
    ["Monitor", "3", "219.00"],
    ["Cable", "40", "4.50"],
]


def ruled_table(rows: list[list[str]]) -> Image.Image:
    widths, height, face = [200, 120, 140], 40, font("sans", 18)
    image = Image.new("RGB", (sum(widths) + 60, height * len(rows) + 60), "white")
    draw = ImageDraw.Draw(image)
    top = left = 30
    for number, row in enumerate(rows):
        x = left
        for cell, width in zip(row, widths, strict=True):
            draw.text((x + 10, top + number * height + 9), cell, font=face, fill="black")
            x += width
    bottom, right = top + height * len(rows), left + sum(widths)
    for y in range(top, bottom + 1, height):
        draw.line([(left, y), (right, y)], fill="black", width=1)
    x = left
    for width in [0, *widths]:
        x += width
        draw.line([(x, top), (x, bottom)], fill="black", width=1)
    return image
