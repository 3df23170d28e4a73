"""How `desklens models --download/--import` reports: a bar on a terminal, plain lines in a
log, or JSON lines for the app's first-run panel (which runs the command as a child)."""

from __future__ import annotations

import json
import shutil
import sys
import threading
from typing import TextIO

from desktop.core.model_setup.progress import Progress, describe
from desktop.core.terminal_text import terminal_text

MODES = ("auto", "bar", "lines", "json")
LINE_STEP = 0.05  # plain lines: one per 5 % of the bytes


class Reporter:
    """say() for steps, progress() for bytes, done()/failed() at the end; thread-safe (the
    byte counter runs in its own thread)."""

    def __init__(self, mode: str = "auto", stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        if mode == "auto":
            mode = "bar" if self.stream.isatty() else "lines"
        self.mode = mode
        self._lock = threading.Lock()
        self._next_line = 0.0
        self._bar_shown = False

    def _emit(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _event(self, event: str, **fields) -> None:
        self._emit(json.dumps({"event": event, **fields}) + "\n")

    def _end_bar(self) -> None:
        if self._bar_shown:
            self._emit("\n")
            self._bar_shown = False

    def say(self, text: str) -> None:
        with self._lock:
            if self.mode == "json":
                self._event("step", text=text)
            else:
                self._end_bar()
                self._emit(f"{terminal_text(text)}\n")

    def progress(self, progress: Progress) -> None:
        with self._lock:
            if self.mode == "json":
                self._event(
                    "progress",
                    done=progress.done,
                    total=progress.total,
                    speed=round(progress.speed),
                    eta_s=None if progress.eta_s is None else round(progress.eta_s, 1),
                    file=progress.file,
                )
            elif self.mode == "bar":
                width = max(10, min(40, shutil.get_terminal_size().columns - 60))
                filled = int(progress.fraction * width)
                bar = "#" * filled + "-" * (width - filled)
                said = terminal_text(describe(progress), lines=False)
                line = f"[{bar}] {progress.fraction:4.0%}  {said}"
                self._emit(f"\r{line:<{width + 58}}")
                self._bar_shown = True
            elif progress.fraction >= self._next_line or progress.done == progress.total:
                said = terminal_text(describe(progress), lines=False)
                self._emit(f"{progress.fraction:.0%}  {said}\n")
                self._next_line = progress.fraction + LINE_STEP

    def done(self, folder: str, text: str) -> None:
        with self._lock:
            self._end_bar()
            if self.mode == "json":
                self._event("done", folder=folder, text=text)
            else:
                self._emit(f"{terminal_text(text)}\n")

    def failed(self, text: str, code: int) -> None:
        """The one sentence: stderr for people, an event for the app."""
        with self._lock:
            self._end_bar()
            if self.mode == "json":
                self._event("error", text=text, code=code)
            else:
                print(f"desklens models: {terminal_text(text)}", file=sys.stderr, flush=True)
