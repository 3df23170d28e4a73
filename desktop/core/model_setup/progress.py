"""Download progress: bytes, speed over the last seconds, time left; and how to say them."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

SPEED_WINDOW_S = 8.0  # long enough to smooth bursts, short enough to follow a changed link


@dataclass(frozen=True)
class Progress:
    done: int  # bytes on disk, including what earlier tries fetched
    total: int
    speed: float  # bytes per second over the last SPEED_WINDOW_S (0 until measurable)
    eta_s: float | None  # None while the speed is unknown
    file: str  # the file being fetched now ("" when verifying)

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


class ProgressMeter:
    """Turns successive byte counts into Progress; the clock is injectable for tests."""

    def __init__(self, total: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.total = total
        self._clock = clock
        self._samples: deque[tuple[float, int]] = deque()

    def update(self, done: int, file: str = "") -> Progress:
        now = self._clock()
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[0][0] > SPEED_WINDOW_S:
            self._samples.popleft()
        (t0, d0), speed = self._samples[0], 0.0
        if now > t0 and done >= d0:
            speed = (done - d0) / (now - t0)
        left = max(self.total - done, 0)
        eta = left / speed if speed > 0 else (0.0 if left == 0 else None)
        return Progress(done, self.total, speed, eta, file)


def format_bytes(count: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{int(count)} B"


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "--"
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


def describe(progress: Progress) -> str:
    """'1.2 GB of 2.6 GB, 11.3 MB/s, 2 min 04 s left'"""
    text = f"{format_bytes(progress.done)} of {format_bytes(progress.total)}"
    if progress.speed > 0:
        text += f", {format_bytes(progress.speed)}/s, {format_duration(progress.eta_s)} left"
    return text
