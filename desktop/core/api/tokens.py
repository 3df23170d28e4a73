"""The local API's bearer token: a random secret in `api.token` in the data folder, readable
by this user only. No web stack here: the app reads and shows the token before any server runs."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from desktop.core import atomic
from desktop.core.api import TOKEN_FILE
from desktop.core.paths import user_data_dir


def token_path() -> Path:
    return user_data_dir() / TOKEN_FILE


def read_token(path: Path) -> str | None:
    """The token in `path`, or None when there is none (missing, unreadable, too short)."""
    try:
        token = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if len(token) < 32:
        return None
    if os.name == "posix" and path.stat().st_mode & 0o077:
        path.chmod(0o600)  # copied or restored with looser rights
    return token


def new_token() -> str:
    return "dl-" + secrets.token_urlsafe(32)


def write_token(path: Path, token: str) -> None:
    """Writes the token atomically to a file only this user can read (0600 from the start)."""
    atomic.write_bytes(path, f"{token}\n".encode("ascii"), mkdir=True, private=True)


def load_or_create_token(path: Path | None = None) -> str:
    """The API token: read from its file, or generated into a new 0600 file."""
    path = path or token_path()
    token = read_token(path)
    return token if token is not None else replace_token(path)


def replace_token(path: Path | None = None) -> str:
    """A new random token, written to its file."""
    token = new_token()
    write_token(path or token_path(), token)
    return token
