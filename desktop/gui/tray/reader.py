"""The tray process's text reading, off the GUI thread: a running `desklens serve` reads the
crop when there is one (its engine is warm); otherwise the tray's own engine, built on the
first capture and kept for the next (a tray lives all day, a first read costs a second)."""

from __future__ import annotations

import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from desktop.core.errors import describe
from desktop.core.ocr.service import Endpoint, OcrRequest, ask_service


@dataclass(frozen=True)
class ReadResult:
    text: str | None  # None when the crop could not be read
    error: str = ""


class TextReader(QObject):
    """`read(png)`; `done` (a ReadResult) on the GUI thread."""

    done = Signal(ReadResult)

    def __init__(self, endpoint: Endpoint, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._endpoint = endpoint
        # One thread: the engine is built and used on it alone.
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="desklens-tray-ocr")
        self._engine: object | None = None

    def read(self, png: bytes) -> None:
        future = self._pool.submit(self._read, png)
        future.add_done_callback(self._finished)  # a signal: queued to the GUI thread

    def close(self) -> None:
        """A read under way ends before the process exits; nothing new starts."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def _finished(self, future: Future) -> None:
        if not future.cancelled():
            self.done.emit(future.result())

    def _read(self, png: bytes) -> ReadResult:
        try:
            with tempfile.TemporaryDirectory(prefix="desklens-tray-") as folder:
                path = Path(folder) / "capture.png"
                path.write_bytes(png)
                reply = ask_service(OcrRequest(str(path), "text"), self._endpoint)
            if reply is not None and reply.status == "ok":
                return ReadResult(reply.output)
            return ReadResult(self._read_here(png))
        except Exception as exc:  # reported in the note; the tray goes on
            return ReadResult(None, f"The capture could not be read: {describe(exc)}")

    def _read_here(self, png: bytes) -> str:
        from desktop.core.images import load_image
        from desktop.core.ocr import OcrEngine

        if self._engine is None:
            self._engine = OcrEngine()
        assert isinstance(self._engine, OcrEngine)
        return self._engine.extract(load_image(png, name="capture.png")).text()
