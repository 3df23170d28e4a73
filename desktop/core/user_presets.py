"""The user's own prompts, beside the built-in presets: name, prompt, answer length and an
optional JSON schema, plus one optional system prompt for new chats.

Kept in `presets.json` in the data folder, the same JSON as the export/import file. A JSON
file rather than a value in the app's QSettings INI: `desklens ask --preset NAME` must read it
without Qt, and QSettings writes strings with its own escaping (a value with a comma comes back
as a list) that the stdlib `configparser` does not undo.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from desktop.core import atomic, bounded_json
from desktop.core.chat import GenerationSettings
from desktop.core.presets import PRESETS, Preset
from desktop.core.schema_check import schema_problem

PRESETS_FILE = "presets.json"
USER_KEY_PREFIX = "user:"
MAX_PRESETS = 100
MAX_PROMPT_CHARS = 20_000
MAX_ANSWER_TOKENS = 16_384
MAX_FILE_BYTES = 2 * 1024 * 1024


class PresetError(ValueError):
    """A presets file that cannot be used; str() is one sentence naming the problem."""


@dataclass(frozen=True)
class UserPreset:
    name: str
    prompt: str
    max_new_tokens: int | None = None  # None: the app's answer length
    json_schema: dict | None = None  # the answer is constrained to this schema

    @property
    def key(self) -> str:
        return USER_KEY_PREFIX + self.name

    def as_preset(self, default_length: int | None = None) -> Preset:
        settings = GenerationSettings(json_schema=self.json_schema)
        length = self.max_new_tokens or default_length  # its own, else the app's
        if length:
            settings = replace(settings, max_new_tokens=length)
        return Preset(self.key, self.name, self.prompt, settings)

    def to_json(self) -> dict:
        data: dict = {"name": self.name, "prompt": self.prompt}
        if self.max_new_tokens:
            data["max_new_tokens"] = self.max_new_tokens
        if self.json_schema is not None:
            data["json_schema"] = self.json_schema
        return data


@dataclass(frozen=True)
class PresetBook:
    presets: tuple[UserPreset, ...] = ()
    system_prompt: str = ""  # opens the first question of every new chat

    def to_json(self) -> dict:
        return {
            "version": 1,
            "system_prompt": self.system_prompt,
            "presets": [preset.to_json() for preset in self.presets],
        }

    def find(self, name: str) -> UserPreset | None:
        folded = name.casefold()
        return next((p for p in self.presets if p.name.casefold() == folded), None)


@dataclass(frozen=True)
class LoadedBook:
    book: PresetBook
    problem: str | None = None  # the file was damaged: the book is empty, this says why


def presets_path(data_dir: str | os.PathLike) -> Path:
    return Path(data_dir) / PRESETS_FILE


def parse_book(data: object, where: str = "The presets file") -> PresetBook:
    """A `PresetBook` from decoded JSON, checked field by field."""
    if not isinstance(data, dict) or not isinstance(data.get("presets", []), list):
        raise PresetError(f'{where} must be a JSON object with a "presets" list.')
    system = data.get("system_prompt", "")
    if not isinstance(system, str) or len(system) > MAX_PROMPT_CHARS:
        raise PresetError(f"{where}: system_prompt must be text of at most {MAX_PROMPT_CHARS}.")
    items = data.get("presets", [])
    if len(items) > MAX_PRESETS:
        raise PresetError(f"{where} has {len(items)} presets; the limit is {MAX_PRESETS}.")
    presets = [parse_preset(item, f"{where}, preset {n}") for n, item in enumerate(items, 1)]
    check_names(presets, where)
    return PresetBook(tuple(presets), system.strip())


def parse_preset(item: object, where: str) -> UserPreset:
    if not isinstance(item, dict):
        raise PresetError(f"{where} must be an object with a name and a prompt.")
    name, prompt = item.get("name"), item.get("prompt")
    if not isinstance(name, str) or not name.strip() or len(name) > 60:
        raise PresetError(f"{where}: name must be text of 1 to 60 characters.")
    if not all(char.isprintable() or char == " " for char in " ".join(name.split())):
        raise PresetError(
            f"{where}: the name {shown(name)} holds control or direction characters; "
            "use letters, digits, spaces and punctuation."
        )
    if not isinstance(prompt, str) or not prompt.strip() or len(prompt) > MAX_PROMPT_CHARS:
        raise PresetError(f'{where} ("{name}"): prompt must be text of 1 to {MAX_PROMPT_CHARS}.')
    length = item.get("max_new_tokens")
    if length is not None and (
        isinstance(length, bool)
        or not isinstance(length, int)
        or not 0 < length <= MAX_ANSWER_TOKENS
    ):
        raise PresetError(f'{where} ("{name}"): max_new_tokens must be 1 to {MAX_ANSWER_TOKENS}.')
    schema = item.get("json_schema")
    if schema is not None and not isinstance(schema, dict):
        raise PresetError(f'{where} ("{name}"): json_schema must be a JSON object.')
    return UserPreset(" ".join(name.split()), prompt.strip(), length or None, schema)


def check_names(presets: Sequence[UserPreset], where: str = "The presets") -> None:
    """Names are unique (ignoring case) and never a built-in preset's key or label."""
    seen: set[str] = set()
    taken = {key.casefold() for key in PRESETS} | {p.label.casefold() for p in PRESETS.values()}
    for preset in presets:
        folded = preset.name.casefold()
        if folded in taken:
            raise PresetError(f'{where}: "{preset.name}" is the name of a built-in preset.')
        if folded in seen:
            raise PresetError(f'{where}: the name "{preset.name}" is used twice.')
        seen.add(folded)


def read_book(path: str | os.PathLike) -> PresetBook:
    """An exported (or the app's) presets file. OSError or PresetError with a sentence."""
    try:
        data = bounded_json.read_json(path, max_bytes=MAX_FILE_BYTES)
    except bounded_json.JsonError as exc:
        raise PresetError(str(exc)) from exc
    return parse_book(data, str(path))


def load_book(data_dir: str | os.PathLike) -> LoadedBook:
    """The user's presets; none when the file does not exist yet or cannot be used."""
    path = presets_path(data_dir)
    try:
        return LoadedBook(read_book(path))
    except FileNotFoundError:
        return LoadedBook(PresetBook())
    except (OSError, PresetError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return LoadedBook(PresetBook(), f"Your own prompts could not be read: {reason}")


def write_book(path: str | os.PathLike, book: PresetBook) -> Path:
    """Saves (or exports) atomically; raises OSError when it cannot be written."""
    return atomic.write_text(path, json.dumps(book.to_json(), indent=2, ensure_ascii=False))


def find_preset(name: str, book: PresetBook, default_length: int | None = None) -> Preset:
    """A built-in preset by key, or the user's by name (or its `user:` key), with
    `default_length` as its answer length unless it is a user preset with its own."""
    if name in PRESETS:
        preset = PRESETS[name]
        return replace(preset, settings=preset.settings_with(max_new_tokens=default_length))
    own = book.find(name.removeprefix(USER_KEY_PREFIX))
    if own is not None:
        problem = schema_problem(own.json_schema) if own.json_schema else None
        if problem:
            raise ValueError(
                f"Your prompt {shown(own.name)} has a JSON schema that {problem}. "
                "Edit it in Settings > My prompts."
            )
        return own.as_preset(default_length)
    names = [*PRESETS, *(p.name for p in book.presets)]  # checked when read: printable
    raise ValueError(f"Unknown preset {shown(name)}; choose one of: {', '.join(names)}.")


def shown(text: str) -> str:
    """`text` quoted for a terminal or a log: control and direction characters (ESC, NUL,
    U+202E...) escaped, never printed raw."""
    safe = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)
    return f"'{safe}'"


@dataclass
class PresetDraft:
    """What the editor holds while the user types (not yet checked)."""

    name: str = ""
    prompt: str = ""
    max_new_tokens: int = 0
    schema_text: str = ""

    def checked(self, where: str) -> UserPreset:
        schema = None
        if self.schema_text.strip():
            try:
                schema = bounded_json.loads(self.schema_text, what="The JSON schema")
            except bounded_json.JsonError as exc:
                raise PresetError(f"{where}: {exc}") from exc
        item = {"name": self.name, "prompt": self.prompt, "json_schema": schema}
        item["max_new_tokens"] = self.max_new_tokens or None
        preset = parse_preset(item, where)
        problem = schema_problem(schema) if isinstance(schema, dict) else None
        if problem:
            raise PresetError(f"{where}: the JSON schema {problem}.")
        return preset
