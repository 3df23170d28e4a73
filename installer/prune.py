"""Drops unwanted files from PyInstaller's binaries list, with the libraries only they needed.

PyInstaller's Qt hooks collect every plugin of a category (all platforms, all themes) and then
everything those plugins link: the GTK theme alone brings cairo, pango and gdk-pixbuf from the
build machine. Removing a plugin from the list after the analysis leaves those libraries
behind, so this walks the link graph and removes what nothing kept still links.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from pathlib import PurePosixPath

Entry = tuple[str, str, str]  # PyInstaller TOC entry: (path in the bundle, source file, typecode)


def library_key(name: str) -> str:
    """How a linked library is referred to: its file name (case-insensitive for Windows)."""
    return PurePosixPath(name.replace("\\", "/")).name.lower()


def bundle_path(entry: Entry) -> str:
    return entry[0].replace("\\", "/")


def _linked(
    start: Iterable[Entry], imports: Callable[[str], Iterable[str]], by_key: dict[str, Entry]
) -> set[str]:
    """Keys of the listed libraries that `start` links, directly or through each other."""
    seen: set[str] = set()
    stack = list(start)
    while stack:
        for name in imports(stack.pop()[1]):
            key = library_key(name)
            if key in by_key and key not in seen:
                seen.add(key)
                stack.append(by_key[key])
    return seen


def prune(
    entries: Sequence[Entry],
    drop: Callable[[str], bool],
    imports: Callable[[str], Iterable[str]],
) -> tuple[list[Entry], list[Entry]]:
    """(kept, removed): entries whose bundle path `drop` accepts, and the libraries that only
    they link. `imports(source_file)` names the libraries a binary links."""
    by_key = {library_key(e[0]): e for e in entries if e[2] == "BINARY"}
    dropped = [e for e in entries if drop(bundle_path(e))]
    pulled = _linked(dropped, imports, by_key)
    roots = [e for e in entries if not drop(bundle_path(e)) and library_key(e[0]) not in pulled]
    needed = _linked(roots, imports, by_key)

    def removed(entry: Entry) -> bool:
        key = library_key(entry[0])
        return drop(bundle_path(entry)) or (key in pulled and key not in needed)

    return [e for e in entries if not removed(e)], [e for e in entries if removed(e)]


def without_dangling_links(entries: Sequence[Entry], present: Iterable[str]) -> list[Entry]:
    """Drops SYMLINK entries (PyInstaller lists them with the data) whose target is gone.

    A SYMLINK entry is (link path, target relative to the link's folder, "SYMLINK").
    """
    paths = {posixpath.normpath(p.replace("\\", "/")) for p in present}

    def dangling(entry: Entry) -> bool:
        if entry[2] != "SYMLINK":
            return False
        link = bundle_path(entry)
        target = posixpath.join(posixpath.dirname(link), entry[1].replace("\\", "/"))
        return posixpath.normpath(target) not in paths

    return [e for e in entries if not dangling(e)]
