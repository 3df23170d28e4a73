"""An OCR result rebuilt from its JSON (`OcrResult.to_dict`): what the app keeps of an
extraction, from which it saves a table as a spreadsheet or the image as a searchable PDF."""

from __future__ import annotations

from typing import Any

from desktop.core.ocr.models import Box, OcrLine, OcrResult, OcrTable


def result_from_dict(data: dict[str, Any]) -> OcrResult:
    """Lines (with their boxes) and tables (with their cells' boxes); codes are left out.
    Raises ValueError for data that is not an OCR result's JSON."""
    try:
        return OcrResult(
            lines=[_line(line) for line in data.get("lines", [])],
            width=int(data["width"]),
            height=int(data["height"]),
            seconds=float(data.get("seconds", 0.0)),
            source_name=str(data.get("source", "")),
            tables=[_table(table) for table in data.get("tables", [])],
            page=data.get("page"),
            text_layer=bool(data.get("text_layer", False)),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError("The stored extraction is not an OCR result.") from exc


def _box(value: list[int]) -> Box:
    left, top, right, bottom = (int(v) for v in value)
    return left, top, right, bottom


def _line(data: dict[str, Any]) -> OcrLine:
    table = data.get("table")
    return OcrLine(
        text=str(data["text"]),
        box=_box(data["box"]),
        confidence=float(data.get("confidence", 1.0)),
        paragraph=int(data.get("paragraph", 0)),
        column=int(data.get("column", 0)),
        indent=int(data.get("indent", 0)),
        kind=data.get("kind", "text"),
        table=int(table) if table is not None else None,
    )


def _table(data: dict[str, Any]) -> OcrTable:
    rows = tuple(tuple(str(cell) for cell in row) for row in data["rows"])
    cells = data.get("cells") or []
    boxes = tuple(
        tuple(_box(cell["box"]) if cell.get("box") is not None else None for cell in row)
        for row in cells
    )
    return OcrTable(rows, _box(data["box"]), bool(data.get("ruled", False)), boxes)
