"""One-click prompts: the same wording and decoding settings in the CLI and the GUI."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from desktop.core.chat import GenerationSettings

# A generic object schema: any JSON object whose values are strings, numbers, booleans or null.
DEFAULT_FIELDS_SCHEMA: dict = {
    "type": "object",
    "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
}


@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    prompt: str
    settings: GenerationSettings = field(default_factory=GenerationSettings)

    def settings_with(self, **overrides) -> GenerationSettings:
        values = {k: v for k, v in overrides.items() if v is not None}
        return replace(self.settings, **values)


PRESETS: dict[str, Preset] = {
    p.key: p
    for p in (
        Preset(
            "text",
            "Transcribe",
            "Extract all text in the image, verbatim, in reading order. Keep line breaks. "
            "Output only the text, with no commentary.",
        ),
        Preset(
            "markdown",
            "As Markdown",
            "Convert the image to Markdown: headings, paragraphs and lists as Markdown, tables "
            "as Markdown tables. Output only the Markdown.",
        ),
        Preset(
            "json",
            "As JSON",
            "Extract the fields in the image (labels and their values) as one JSON object. "
            "Output only the JSON.",
            GenerationSettings(json_schema=DEFAULT_FIELDS_SCHEMA),
        ),
        Preset(
            "describe",
            "Describe",
            "Describe the image: what it shows, its layout and its key details.",
            GenerationSettings(temperature=0.0, repetition_penalty=1.05),
        ),
    )
}


def get_preset(key: str) -> Preset:
    try:
        return PRESETS[key]
    except KeyError:
        raise ValueError(f"Unknown preset '{key}'; choose one of: {', '.join(PRESETS)}.") from None
