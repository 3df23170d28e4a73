"""How an extraction (fast OCR) is stored in the history: the plain text as the message, the
Markdown, JSON and timing in its stats. Qt-free: the GUI shows it, the CLI could export it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.core.history.records import StoredMessage

if TYPE_CHECKING:
    from desktop.core.ocr import OcrResult

_OCR_KIND = "ocr"  # marks the stats of an OCR message, which carry its other formats


@dataclass(frozen=True)
class OcrText:
    """An extraction in the three formats the user can copy or save."""

    source_name: str
    text: str
    markdown: str
    json: str
    seconds: float = 0.0

    @classmethod
    def from_result(cls, result: OcrResult) -> OcrText:
        return cls(
            result.source_name, result.text(), result.markdown(), result.to_json(), result.seconds
        )

    @classmethod
    def from_message(cls, message: StoredMessage) -> OcrText:
        """Rebuilt from the history: the stats of an OCR message hold markdown and JSON."""
        extra = message.stats or {}
        name = message.images[0].name if message.images else ""
        return cls(
            name,
            message.text,
            str(extra.get("markdown", message.text)),
            json.dumps(extra.get("json", {}), ensure_ascii=False, indent=2),
            float(extra.get("seconds", 0.0)),
        )

    @property
    def has_tables(self) -> bool:
        """Tables were found: the bubble shows the Markdown, whose tables render as grids
        (their plain text is tab-separated cells, which a proportional font misaligns)."""
        data = json.loads(self.json) if self.json else {}
        return bool(data.get("tables")) if isinstance(data, dict) else False

    def stats(self) -> dict[str, Any]:
        return {
            "kind": _OCR_KIND,
            "markdown": self.markdown,
            "json": json.loads(self.json),
            "seconds": self.seconds,
        }
