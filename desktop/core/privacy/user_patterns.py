"""The user's own redaction patterns: `redaction.json` in the data folder.

A JSON file, as the user's prompts are (core/user_presets.py), not a QSettings value:
`desklens redact` reads it without Qt, and the app's Settings edits the same list. Every
pattern is checked when read and when saved (`PatternError`: one sentence naming it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from desktop.core import atomic, bounded_json
from desktop.core.privacy.patterns import PatternError, UserPattern, compile_pattern

PATTERNS_FILE = "redaction.json"
MAX_PATTERNS = 200
MAX_FILE_BYTES = 512 * 1024


def patterns_path(data_dir: str | os.PathLike) -> Path:
    return Path(data_dir) / PATTERNS_FILE


def read_patterns(data_dir: str | os.PathLike) -> tuple[str, ...]:
    """The saved patterns (none when the file is absent); PatternError for a file that cannot
    be used, naming it."""
    path = patterns_path(data_dir)
    if not path.exists():
        return ()
    try:
        data = bounded_json.read_json(path, max_bytes=MAX_FILE_BYTES)
    except (OSError, ValueError) as exc:
        raise PatternError(f"Could not read your redaction patterns in {path}: {exc}") from None
    items = data.get("patterns") if isinstance(data, dict) else None
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise PatternError(f'{path} should hold a list of patterns under "patterns".')
    checked = check_patterns(items)
    return tuple(pattern.source for pattern in checked)


def check_patterns(sources: Sequence[str]) -> tuple[UserPattern, ...]:
    """Each pattern compiled; a PatternError for the first that is not usable."""
    if len(sources) > MAX_PATTERNS:
        raise PatternError(f"At most {MAX_PATTERNS} redaction patterns can be kept.")
    return tuple(compile_pattern(source) for source in sources)


def write_patterns(data_dir: str | os.PathLike, sources: Sequence[str]) -> Path:
    """The patterns saved whole (checked first: a bad one is never written)."""
    check_patterns(sources)
    text = json.dumps({"version": 1, "patterns": list(sources)}, ensure_ascii=False, indent=2)
    return atomic.write_text(patterns_path(data_dir), text + "\n", mkdir=True)
