"""The one way DeskLens writes a file: a temporary file in the same folder, fsync, rename.

A reader (or a crash, a full disk, a kill) then sees either the old file or the whole new one,
never a truncated file that looks like a result. A failure raises `WriteError`, whose text is a
sentence naming the file and the reason, and removes the temporary file.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

TEMP_PREFIX = ".desklens-write-"  # a leftover of a killed process is recognisable (and hidden)

_FOLDER_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO}


class WriteError(OSError):
    """A file could not be written; str(error) is one sentence naming it and saying why.
    `errno` is the underlying error's, so callers can tell a full disk from the rest."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, write_failure(path, cause))
        self.path = path
        self.disk_full = cause.errno in (errno.ENOSPC, errno.EDQUOT)
        # Full, read-only or forbidden: every further file in that folder fails alike.
        self.affects_folder = cause.errno in _FOLDER_ERRORS

    def __str__(self) -> str:
        return str(self.strerror)


def write_failure(path: Path, cause: OSError) -> str:
    """'Could not write PATH: REASON.' for an OSError ("No space left on device")."""
    reason = cause.strerror or str(cause) or type(cause).__name__
    return f"Could not write {path}: {reason.rstrip('.')}."


@contextmanager
def atomic_file(
    path: str | os.PathLike,
    mode: str = "w",
    *,
    mkdir: bool = False,
    private: bool = False,
    suffix: str = "",
) -> Iterator[IO]:
    """An open temporary file that replaces `path` when the block ends without an error.

    `mode` is "w" (UTF-8 text), "wb" or "w+b" (read back before the rename). The new file
    gets the usual permissions (0666 less the umask), or 0600 when `private` (a secret: it is
    never readable by others, not even between its creation and the rename). `suffix` ends
    the temporary file's name (so that a store can find its own leftovers).
    """
    target = Path(path)
    temporary: Path | None = None
    try:
        if mkdir:
            _make_folder(target.parent)
        handle, name = tempfile.mkstemp(dir=target.parent, prefix=TEMP_PREFIX, suffix=suffix)
        temporary = Path(name)
        if not private and os.chmod in os.supports_fd:  # mkstemp made it 0600
            os.chmod(handle, 0o666 & ~_UMASK)
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(handle, mode, encoding=encoding) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        raise (exc if isinstance(exc, WriteError) else WriteError(target, exc)) from exc
    finally:
        if temporary is not None:
            temporary.unlink(missing_ok=True)


def _make_folder(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # a file where a folder of the path should be
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)) from exc


def write_text(path: str | os.PathLike, text: str, *, mkdir: bool = False) -> Path:
    """`text` as the whole UTF-8 content of `path`, atomically."""
    with atomic_file(path, "w", mkdir=mkdir) as file:
        file.write(text)
    return Path(path)


def write_bytes(
    path: str | os.PathLike, data: bytes, *, mkdir: bool = False, private: bool = False
) -> Path:
    with atomic_file(path, "wb", mkdir=mkdir, private=private) as file:
        file.write(data)
    return Path(path)


def write_with(path: str | os.PathLike, save: Callable[[IO[bytes]], None]) -> Path:
    """For writers that take a binary file object (PIL's save, ElementTree's write)."""
    with atomic_file(path, "wb") as file:
        save(file)
    return Path(path)


def write_output(
    path: str | os.PathLike,
    save: Callable[[IO[bytes]], object],
    check: Callable[[IO[bytes]], object] | None = None,
) -> Path:
    """A file the user asked for, whole and where asked: `save` writes it, `check` reads it
    back (raising ValueError or OSError when it is not a whole file of its kind) before it is
    put in place. A regular or absent target is replaced by a temporary file beside it; a link
    is followed and its target written so; a FIFO, a terminal or /dev/stdout is written
    through (never replaced by a file); a folder or a block device is refused (WriteError)."""
    target = Path(path)
    through = _written_through(target)
    if through is None:
        real = Path(os.path.realpath(target)) if target.is_symlink() else target
        with atomic_file(real, "w+b", mkdir=True) as file:
            save(file)
            _check(real, file, check)
        return target
    with tempfile.TemporaryFile(prefix=TEMP_PREFIX) as staged:
        try:
            save(staged)
            _check(target, staged, check)
            staged.seek(0)
            # A file behind /dev/stdout is appended to: what the shell's `>` or `>>` and the
            # process wrote before stays (a new open of /proc/self/fd/1 starts at offset 0).
            flags = os.O_WRONLY | os.O_NOCTTY | (os.O_APPEND if through == "file" else 0)
            with os.fdopen(os.open(target, flags), "wb") as out:
                shutil.copyfileobj(staged, out)
        except OSError as exc:
            raise (exc if isinstance(exc, WriteError) else WriteError(target, exc)) from exc
    return target


def _written_through(target: Path) -> str | None:
    """How a target is written: None (a temporary file put in its place), "stream" (a FIFO,
    a character device, a socket: written as it is), "file" (a regular file reached through
    /dev/fd or /proc, such as /dev/stdout redirected to a file: appended to)."""
    try:
        status = os.stat(target)  # follows links
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteError(target, exc) from exc
    if stat.S_ISDIR(status.st_mode):
        raise WriteError(target, IsADirectoryError(errno.EISDIR, "it is a folder"))
    if stat.S_ISBLK(status.st_mode):
        raise WriteError(target, OSError(errno.EPERM, "it is a disk, not a file"))
    if not stat.S_ISREG(status.st_mode):
        return "stream"
    real = os.path.realpath(target)
    descriptor = str(target).startswith(("/dev/", "/proc/")) or real.startswith("/proc/")
    return "file" if descriptor else None


def _check(target: Path, file: IO[bytes], check: Callable[[IO[bytes]], object] | None) -> None:
    if check is None:
        return
    file.flush()
    file.seek(0)
    try:
        check(file)
    except Exception as exc:  # each reader has its own errors: any of them means damaged
        reason = f"the file written did not read back whole ({exc})"
        raise WriteError(target, OSError(errno.EIO, reason)) from exc


def _read_umask() -> int:
    # Read once at import: os.umask can only be read by setting it, which is not thread-safe.
    current = os.umask(0o022)
    os.umask(current)
    return current


_UMASK = _read_umask()
