"""The file names a hub listing gives, made safe before any of them touches the disk.

A listing comes from a server: a name may be absolute, climb out with `..`, carry a drive
letter, a backslash, a NUL or terminal escapes. Every name is checked here (refused with a
sentence that names it, never dropped silently) before the download stats, reads, writes or
removes anything, and every path built from one is checked to stay inside its folder without
passing through a symbolic link. So a download writes only inside its staging folder.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import unicodedata
from collections.abc import Callable
from pathlib import Path

from desktop.core.model_setup.errors import ModelRejected

MAX_NAME_CHARS = 512
_DRIVE = re.compile(r"^[A-Za-z]:")


def _odd_char(c: str) -> bool:
    return ord(c) < 32 or ord(c) == 127 or unicodedata.category(c) == "Cf"


def _not_plain(name: str) -> bool:
    parts = name.split("/")
    return any(part in ("", ".", "..") for part in parts) or posixpath.normpath(name) != name


# (is it wrong, what is wrong), checked in order on a non-empty string.
_RULES: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda n: len(n) > MAX_NAME_CHARS, f"is longer than {MAX_NAME_CHARS} characters"),
    (lambda n: any(_odd_char(c) for c in n), "holds a control or formatting character"),
    (lambda n: "\\" in n, "holds a backslash"),
    (lambda n: n.startswith("/"), "is an absolute path"),
    (lambda n: bool(_DRIVE.match(n)) or ":" in n, "names a drive or a stream (':')"),
    (_not_plain, "is not a plain relative path ('..', '.' or an empty part)"),
    (lambda n: unicodedata.normalize("NFC", n) != n, "is not in normalised (NFC) form"),
)


def name_problem(name: object) -> str | None:
    """Why `name` is not a plain relative file name inside a folder, or None."""
    if not isinstance(name, str) or not name:
        return "is empty"
    return next((problem for wrong, problem in _RULES if wrong(name)), None)


def check_name(name: object, repo: str) -> str:
    """`name` itself, or ModelRejected (exit 3) with a sentence naming it (escaped)."""
    problem = name_problem(name)
    if problem is not None:
        raise ModelRejected(
            f"{repo} lists a file named {name!r}, which {problem}: DeskLens downloads only "
            "files inside the model's folder, so nothing was downloaded or changed.",
            exit_code=3,
        )
    assert isinstance(name, str)
    return name


def inside(folder: Path, name: str) -> Path:
    """`folder / name` for a checked `name`, once no part of it below `folder` is a symbolic
    link (a link there is refused, never followed) and its real path is inside `folder`."""
    if name_problem(name) is not None:
        raise ModelRejected(f"Refused to use the file name {name!r} in {folder}.", exit_code=3)
    path = folder
    for part in name.split("/"):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            break  # nothing below a missing part exists either
        if stat.S_ISLNK(mode):
            raise ModelRejected(
                f"{path} is a symbolic link inside a download folder; DeskLens does not follow "
                "it. Remove it and Download again.",
                exit_code=3,
            )
    real_folder = os.path.realpath(folder)
    real = os.path.realpath(folder / name)
    if os.path.commonpath([real_folder, real]) != real_folder:
        raise ModelRejected(f"{name!r} resolves outside {folder}; refused.", exit_code=3)
    return folder / name
