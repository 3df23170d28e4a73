"""Hidden folders beside the target: nothing half-made is ever where the app looks for models.

Convert and import stage into `.desklens-tmp-<name>-<pid>` (removed on failure, or by the next
run once that pid is gone). A download stages into `.desklens-download-<name>`, named without a
pid on purpose: the next try, after a restart or a kill -9, finds it and resumes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from desktop.core.model_setup.errors import FetchFailed, SetupError

TMP_PREFIX = ".desklens-tmp-"
OLD_PREFIX = ".desklens-old-"
DOWNLOAD_PREFIX = ".desklens-download-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # someone else's process, or a platform that cannot tell: keep it
    return True


def clean_leftovers(parent: Path) -> list[Path]:
    """Removes temporary folders left by a converter that was killed (its pid is gone).
    Download staging folders are kept: they are the resume point."""
    removed: list[Path] = []
    if not parent.is_dir():
        return removed
    for entry in parent.iterdir():
        if not entry.is_dir() or not entry.name.startswith((TMP_PREFIX, OLD_PREFIX)):
            continue
        pid_text = entry.name.rsplit("-", 1)[-1]
        if pid_text.isdigit() and _pid_alive(int(pid_text)) and int(pid_text) != os.getpid():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


@contextlib.contextmanager
def staging_folder(target: Path) -> Iterator[Path]:
    """A hidden folder beside the target, removed unless the caller moved it into place."""
    staging = target.parent / f"{TMP_PREFIX}{target.name}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def download_folder(target: Path) -> Path:
    """Where the download for `target` collects its files (kept between tries)."""
    return target.parent / f"{DOWNLOAD_PREFIX}{target.name}"


def move_into_place(staging: Path, target: Path, force: bool) -> None:
    """Renames `staging` to `target` (same disk: instant); a replaced target comes back if
    the rename fails."""
    old = None
    if target.exists():
        if not force:
            raise SetupError(f"{target} already exists. Pass --force to replace it.", 2)
        old = target.parent / f"{OLD_PREFIX}{target.name}-{os.getpid()}"
        target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        if old is not None:
            old.rename(target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def folder_size(folder: Path, suffixes: tuple[str, ...] | None = None) -> int:
    return sum(
        p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and (suffixes is None or p.suffix in suffixes)
    )


def existing_parent(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def check_free_space(where: Path, needed: int, what: str, hint: str) -> None:
    """Refuses to start when the disk holding `where` has less than `needed` bytes free."""
    probe = existing_parent(where)
    free = shutil.disk_usage(probe).free
    if free < needed:
        raise FetchFailed(
            f"Not enough free disk space in {probe}: {what} needs about "
            f"{needed / 2**30:.1f} GiB and {free / 2**30:.1f} GiB is free. {hint}"
        )
