"""How an extraction (fast OCR) is stored in the history: the plain text as the message, the
Markdown and JSON in their own columns, the timing in its stats. Qt-free: the GUI shows it,
the CLI could export it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from desktop.core.history.records import StoredMessage, StoredOcr

if TYPE_CHECKING:
    from desktop.core.ocr import OcrResult


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
        """Rebuilt from the history (its Markdown and JSON columns)."""
        stored = message.ocr or StoredOcr(message.text, "{}")
        seconds = (message.stats or {}).get("seconds", 0.0)
        name = message.images[0].name if message.images else ""
        return cls(
            name,
            message.text,
            stored.markdown or message.text,
            _pretty(stored.json),
            float(seconds) if isinstance(seconds, (int, float)) else 0.0,
        )

    @property
    def has_tables(self) -> bool:
        """Tables were found: the bubble shows the Markdown, whose tables render as grids
        (their plain text is tab-separated cells, which a proportional font misaligns)."""
        data = json.loads(self.json) if self.json else {}
        return bool(data.get("tables")) if isinstance(data, dict) else False

    def stats(self) -> dict[str, Any]:
        return {"seconds": self.seconds}

    def stored(self) -> StoredOcr:
        return StoredOcr(self.markdown, self.json)


def _pretty(text: str) -> str:
    """The stored JSON indented for reading; as it is when it is damaged."""
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2)
    except ValueError:
        return text
