"""Run a function as another user (a throwaway uid) in a forked child: the tests run as root
in CI, where permissions mean nothing to the test process itself. Forked, not spawned: the
interpreter may live under a folder that the other user cannot enter."""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

NOBODY = 65534
T = TypeVar("T")


def as_other_user(function: Callable[[], T], uid: int = NOBODY) -> T:
    """`function()`'s result, computed as `uid` (as this user when not root); an exception
    in the child is raised here."""
    if os.getuid() != 0:
        return function()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - runs in the child
        os.close(read)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            outcome: tuple[bool, object] = (True, function())
        except BaseException as exc:  # reported to the parent, whatever it is
            outcome = (False, exc)
        with os.fdopen(write, "wb") as pipe:
            pickle.dump(outcome, pipe)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        ok, value = pickle.load(pipe)
    os.waitpid(child, 0)
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


@contextmanager
def shared_folder() -> Iterator[Path]:
    """A folder the other user can reach and write in (pytest's own are 0700), like /tmp."""
    folder = Path(tempfile.mkdtemp(prefix="dl-"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        for path in (folder, *folder.rglob("*")):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)  # chmod-ed 000 by a test: rmtree needs to look inside
        shutil.rmtree(folder)
