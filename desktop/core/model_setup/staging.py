"""Hidden folders beside the target: nothing half-made is ever where the app looks for models.

Convert and import stage into `.desklens-tmp-<name>-<pid>` (removed on failure, or by the next
run once that pid is gone). A download stages into `.desklens-download-<name>`, named without a
pid on purpose: the next try, after a restart or a kill -9, finds it and resumes.

These names are predictable, so something else may already be there: a symbolic link planted
at any of them is removed as a link (`lstat`, never followed), so nothing is ever written
through one into another folder, and `--force` over a linked model removes the link only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
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
        if not entry.name.startswith((TMP_PREFIX, OLD_PREFIX)):
            continue
        if not entry.is_symlink() and not entry.is_dir():
            continue
        pid_text = entry.name.rsplit("-", 1)[-1]
        if pid_text.isdigit() and _pid_alive(int(pid_text)) and int(pid_text) != os.getpid():
            continue
        remove(entry)
        removed.append(entry)
    return removed


def remove(path: Path) -> None:
    """Removes what is at `path`: a link or a file itself (never what a link points to), a
    folder with its contents. Missing is fine."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def own_folder(path: Path, *, fresh: bool = False) -> Path:
    """`path` as a real folder (made 0700 if missing): a link or a file planted there is
    removed, not followed; an existing real folder is kept (unless `fresh`) with every link
    inside it removed, so that nothing written below it can land elsewhere."""
    if fresh or (path.is_symlink() or (path.exists() and not path.is_dir())):
        remove(path)
    path.mkdir(mode=0o700, exist_ok=True)
    if not stat.S_ISDIR(os.lstat(path).st_mode):  # replaced again in between: give up
        raise SetupError(f"{path} is not a folder DeskLens made; remove it and try again.", 4)
    for root, dirs, files in os.walk(path):  # does not descend into linked folders
        for name in dirs + files:
            entry = Path(root, name)
            if entry.is_symlink():
                entry.unlink()
    return path


@contextlib.contextmanager
def staging_folder(target: Path) -> Iterator[Path]:
    """A hidden folder beside the target, removed unless the caller moved it into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = own_folder(target.parent / f"{TMP_PREFIX}{target.name}-{os.getpid()}", fresh=True)
    try:
        yield staging
    finally:
        remove(staging)


def download_folder(target: Path) -> Path:
    """Where the download for `target` collects its files (kept between tries)."""
    return target.parent / f"{DOWNLOAD_PREFIX}{target.name}"


def move_into_place(staging: Path, target: Path, force: bool) -> None:
    """Renames `staging` to `target` (same disk: instant); a replaced target comes back if
    the rename fails."""
    old = None
    if os.path.lexists(target):  # a dangling link too
        if not force:
            raise SetupError(f"{target} already exists. Pass --force to replace it.", 2)
        old = target.parent / f"{OLD_PREFIX}{target.name}-{os.getpid()}"
        remove(old)
        target.rename(old)  # a link is renamed as a link: its target is not touched
    try:
        staging.rename(target)
    except OSError:
        if old is not None:
            old.rename(target)
        raise
    if old is not None:
        remove(old)


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
