"""Run a function as another user (a throwaway uid) in a forked child: the tests run as root
in CI, where permissions mean nothing to the test process itself. Forked, not spawned: the
interpreter may live under a folder that the other user cannot enter."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
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
