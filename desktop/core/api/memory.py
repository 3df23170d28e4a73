"""Memory given back after a request that carried a large image.

The server decodes images and runs the OCR on worker threads, and glibc serves each thread
from its own arena: a 100-megapixel image's buffers, once freed, stay in those arenas (the
process RSS stays ~0.5 GB higher) unless the allocator is asked to return free pages. Asking
costs milliseconds, so it is done after large images only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
import threading
from collections.abc import Callable, Iterable
from functools import cache

from desktop.core.images import LoadedImage

LARGE_PIXELS = 8_000_000  # above a 4K screenshot: worth giving the memory back
# How long the give-back waits for the engine's owner thread to let a chat request go (it
# ends a cancelled answer at its next token; a stuck one must not hold a server thread).
OWNER_WAIT_S = 60.0


# Where the cyclic collector runs. The app confines it to its GUI thread (Qt objects found in
# a cycle must die there: desktop/gui/lifetimes.py) and sets this while its window lives.
_collect: Callable[[], object] = gc.collect


def collect_with(collect: Callable[[], object] | None) -> None:
    """Runs the give-back's collection through `collect` (None: `gc.collect` here)."""
    global _collect
    _collect = collect or gc.collect


def large(images: Iterable[LoadedImage]) -> bool:
    return sum(image.size[0] * image.size[1] for image in images) >= LARGE_PIXELS


def give_back(after: threading.Event | None = None) -> None:
    """Collects garbage, then returns the allocator's free pages to the system (glibc);
    once `after` is set, when another thread still held the request's images as the reply
    went out (memory freed after the trim would stay with the process)."""
    if after is not None:
        after.wait(OWNER_WAIT_S)
    _collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim():  # noqa: ANN202 (a ctypes function)
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc.malloc_trim
    except (OSError, AttributeError):  # musl and other C libraries have no malloc_trim
        return None
