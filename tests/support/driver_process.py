"""A test driver of the app in a child process (tests/support/capture_app.py, tray_app.py):
commands in on stdin, JSON events out on stdout, one a line. The events are read on a thread
into a queue, so a test waits for the next one with a deadline and a silent pipe cannot block
it; stderr is kept for the failure message."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Collection
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 120  # an OCR warm-up on two busy cores


def driver_env(base: dict[str, str], data_dir: Path, **extra: str) -> dict[str, str]:
    """`base` (the X server's) with the app's folders under `data_dir` (no model found) and
    the checkout and tests/support importable."""
    return {**base, **extra, "DESKLENS_DATA_DIR": str(data_dir),
            "DESKLENS_MODELS_DIR": str(data_dir / "no-models"),
            "PYTHONPATH": f"{ROOT}:{ROOT / 'tests' / 'support'}"}  # fmt: skip


class DriverProcess:
    """`driver DATA_DIR ARGS...` under `env`. `wait_for` fails at once on an event in
    `fail_on`: an outcome that rules out the one awaited (a "copied" when "cancelled" was)."""

    def __init__(
        self,
        driver: Path,
        data_dir: Path,
        *args: str,
        env: dict[str, str],
        fail_on: Collection[str] = (),
    ) -> None:
        self.env = env
        self.process = subprocess.Popen(
            [sys.executable, str(driver), str(data_dir), *args], env=env, cwd=ROOT, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.events: queue.Queue[dict] = queue.Queue()
        self.stderr: list[str] = []
        self._fail_on = frozenset(fail_on)
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_errors, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))
        self.events.put({"event": "exited"})

    def _read_errors(self) -> None:
        assert self.process.stderr is not None
        self.stderr.extend(self.process.stderr)

    def _said(self) -> str:
        return "".join(self.stderr)[-3000:]

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def wait_for(self, name: str) -> dict:
        """The next event called `name`; fails on the timeout, an exit or a `fail_on` event."""
        while True:
            try:
                event = self.events.get(timeout=WAIT_S)
            except queue.Empty:
                pytest.fail(f"no {name!r} event; app stderr:\n{self._said()}")
            if event["event"] == name:
                return event
            if event["event"] == "exited":
                pytest.fail(f"the app exited before {name!r}; stderr:\n{self._said()}")
            if event["event"] in self._fail_on:
                pytest.fail(f"expected {name!r}, got {event}; stderr:\n{self._said()}")

    def close(self) -> dict:
        """Quits the app; its "bye" event."""
        self.send("quit")
        bye = self.wait_for("bye")
        self.process.wait(timeout=60)
        return bye
