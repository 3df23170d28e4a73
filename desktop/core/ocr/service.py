"""A warm OCR engine that answers `desklens ocr` from another process, over a local socket.

A one-shot `desklens ocr` spends about a second before it reads anything: starting Python,
importing OpenVINO, compiling the models and meeting each input shape for the first time,
more than reading a screenshot takes on a warm engine. A process that keeps the engine warm
(`desklens serve`, or the open desktop app) answers instead, and the client imports nothing
heavy (this module needs only the standard library).

Only the same user gets in (`service_transport`: a private socket folder, an HMAC challenge
keyed by a secret in a 0600 file, under a handshake timeout). Messages are JSON, bounded in
size and depth; nothing is pickled. Each connection has its own thread (at most
MAX_CONNECTIONS; one more is closed at once and its client reads the file itself), so a slow
or silent client never holds up another. A request that fails in any way gets an error reply
and the service goes on; if the listening thread itself ends, `failure` says why. The open
app's service also takes files to attach (`desklens shot.png` while DeskLens is open: one
window, one model in memory).
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from multiprocessing import AuthenticationError
from multiprocessing.connection import Connection, Listener
from pathlib import Path
from typing import Literal

from desktop.core import bounded_json
from desktop.core.errors import describe
from desktop.core.ocr.service_transport import (
    UNIX_PATH_LIMIT,
    Endpoint,
    FolderRefused,
    authenticate,
    connect,
    default_endpoint,
    private_folder,
    shut,
    wake,
    write_key,
)

__all__ = ["Endpoint", "OcrReply", "OcrRequest", "OcrService", "ServiceError", "default_endpoint"]

# What the CLI turns into its exit code; "stopped": the service closed mid-request (the
# client then reads the file itself).
Status = Literal["ok", "input", "model", "failed", "stopped"]
MAX_MESSAGE_BYTES = 1 << 20  # a request is a path and a format name (or a few paths)
MAX_REPLY_BYTES = 64 << 20  # the text of a long PDF
MAX_MESSAGE_DEPTH = 4  # {"op": ..., "paths": [...]}
MAX_CONNECTIONS = 8  # threads answering at once; requests beyond wait on the engine anyway
_UNIX_PATH_LIMIT = UNIX_PATH_LIMIT


class ServiceError(Exception):
    """The service cannot start; str(error) says why in one sentence."""


@dataclass(frozen=True)
class OcrRequest:
    path: str  # absolute: the service runs in another working folder
    format: str = "text"


@dataclass(frozen=True)
class OcrReply:
    status: Status
    output: str = ""  # the rendered document when status is "ok"
    error: str = ""  # one user-facing sentence otherwise
    seconds: float = 0.0  # spent by the service on this request


# Reads one request; the event is set when the service is stopping (a long PDF may end early).
Handler = Callable[[OcrRequest, threading.Event], OcrReply]


def ask_service(request: OcrRequest, endpoint: Endpoint | None = None) -> OcrReply | None:
    """The service's reply, or None when no service answers (then read in-process).

    Without a service this costs two failed file lookups: no socket is even created.
    """
    reply = _exchange({"op": "ocr", **asdict(request)}, endpoint)
    try:
        answer = OcrReply(**reply) if reply is not None else None
    except TypeError:
        return None  # another DeskLens version's service: read in-process
    return None if answer is None or answer.status == "stopped" else answer


def hand_to_open_app(
    paths: Sequence[str | os.PathLike],
    endpoint: Endpoint | None = None,
    model: str = "",
    *,
    extract: bool = False,
) -> bool:
    """True when a running DeskLens window took the files (it attaches them and comes to the
    front; `model`, a folder given with --model, it offers to switch to; `extract`: it shows
    their extracted text in the chat too); False when none runs, or only `desklens serve`."""
    message: dict[str, object] = {
        "op": "open", "paths": [os.path.abspath(p) for p in paths], "model": model,
    }  # fmt: skip
    if extract:
        message["extract"] = True
    reply = _exchange(message, endpoint)
    return reply is not None and reply.get("opened") is True


def ask_open_app_to_capture(mode: str = "", endpoint: Endpoint | None = None) -> bool:
    """True when a running DeskLens window starts a screen capture (`desklens capture`);
    `mode` is "copy", "ask" or "" (the window's setting)."""
    reply = _exchange({"op": "capture", "mode": mode}, endpoint)
    return reply is not None and reply.get("capturing") is True


def ping(endpoint: Endpoint | None = None) -> int | None:
    """The process id of the service listening there, or None."""
    reply = _exchange({"op": "ping"}, endpoint)
    pid = reply.get("pid") if reply is not None else None
    return pid if isinstance(pid, int) else None


def _exchange(message: dict, endpoint: Endpoint | None) -> dict | None:
    """One JSON message out, one JSON object back; None when no service answers."""
    connection = connect(endpoint or default_endpoint())
    if connection is None:
        return None
    with connection:
        try:
            connection.send_bytes(json.dumps(message).encode())
            data = connection.recv_bytes(MAX_REPLY_BYTES)
            reply = bounded_json.loads(data, max_bytes=MAX_REPLY_BYTES, max_depth=8)
        except (OSError, EOFError, ValueError):
            return None  # the service went away mid-request: the caller reads it itself
    return reply if isinstance(reply, dict) else None


class OcrService:
    """Listens on a background thread and answers each connection on a thread of its own.

    `start()` raises ServiceError when another service already answers at the endpoint, or
    the socket folder is not this user's; `stop()` ends the threads and removes the socket
    and key. `on_request` hears of each answered request (for a log line); `on_open` takes
    files handed over by `desklens FILE`, `on_model` the folder of a `desklens gui --model`
    handed over with them, and `on_capture` a `desklens capture` request's mode (all called
    on a connection's thread). `failure` is
    the reason the listening thread ended by itself, if it did.
    """

    def __init__(
        self,
        handler: Handler,
        *,
        endpoint: Endpoint | None = None,
        on_request: Callable[[OcrRequest, OcrReply], None] | None = None,
        on_open: Callable[[list[str]], None] | None = None,
        on_model: Callable[[str], None] | None = None,
        on_capture: Callable[[str], None] | None = None,
        on_extract: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.endpoint = endpoint or default_endpoint()
        self.last_request_at = time.monotonic()
        self.failure: str | None = None
        self._handler = handler
        self._on_request = on_request
        self._on_open = on_open
        self._on_model = on_model
        self._on_capture = on_capture
        self._on_extract = on_extract  # before on_open: the files to extract once attached
        self._key = b""
        self._listener: Listener | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._lock = threading.Lock()
        self._waiting: set[Connection] = set()  # in the handshake or reading their request
        self._workers: set[threading.Thread] = set()

    def start(self) -> None:
        running = ping(self.endpoint)
        if running is not None:
            raise ServiceError(f"A DeskLens OCR service is already running (process {running}).")
        try:
            self._key = write_key(self.endpoint)
            folder = self.endpoint.socket_folder
            if folder is not None:
                private_folder(folder)
                Path(self.endpoint.address).unlink(missing_ok=True)  # left by a killed service
            self._listener = Listener(self.endpoint.address, self.endpoint.family, backlog=16)
        except OSError as exc:
            self._remove_key()
            reason = str(exc) if isinstance(exc, FolderRefused) else describe(exc)
            raise ServiceError(f"The OCR service could not start: {reason}") from exc
        # A daemon: an owner that never calls stop() must still be able to exit (the socket
        # it leaves behind is then refused, and replaced by the next service).
        self._thread = threading.Thread(
            target=self._serve, name="desklens-ocr-service", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Asks the requests in progress to end (their clients then read the files
        themselves), waits for them, then closes; safe to call twice."""
        if self._thread is None:
            return
        self._stopping.set()
        # Wake a blocked accept() with a bare connection that never waits for an answer.
        wake(self.endpoint)
        self._thread.join()
        self._thread = None
        with self._lock:
            for connection in self._waiting:
                shut(connection)  # silent clients: their threads end now, not at the timeout
            workers = list(self._workers)
        for worker in workers:
            worker.join()
        if self._listener is not None:
            self._listener.close()  # removes the socket file
            self._listener = None
        self._remove_key()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _serve(self) -> None:
        try:
            self._accept_loop()
        except Exception as exc:  # for the owner to report (serve then exits non-zero)
            self.failure = f"The OCR service stopped unexpectedly: {describe(exc)}"

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                connection = self._listener.accept()
            except OSError:
                # Out of file descriptors, say: back off instead of spinning, then go on.
                self._stopping.wait(0.1)
                continue
            if self._stopping.is_set() or not self._slots.acquire(blocking=False):
                connection.close()  # busy: the client reads the file itself
                continue
            worker = threading.Thread(
                target=self._converse, args=(connection,), name="desklens-ocr-request", daemon=True
            )
            with self._lock:
                self._workers.add(worker)
                self._waiting.add(connection)
            worker.start()

    def _converse(self, connection: Connection) -> None:
        try:
            # A client that hung up, failed the challenge or stayed silent: nothing to answer.
            with contextlib.suppress(OSError, EOFError, AuthenticationError), connection:
                self._answer(connection)
        finally:
            with self._lock:
                self._waiting.discard(connection)
                self._workers.discard(threading.current_thread())
            self._slots.release()

    def _answer(self, connection: Connection) -> None:
        authenticate(connection, self._key)
        data = connection.recv_bytes(MAX_MESSAGE_BYTES)
        with self._lock:
            self._waiting.discard(connection)
        try:
            message = bounded_json.loads(
                data, max_bytes=MAX_MESSAGE_BYTES, max_depth=MAX_MESSAGE_DEPTH, what="The request"
            )
            request, reply = self._dispatch(message)
        except Exception as exc:  # a poisoned or malformed request: answered, never fatal
            request, reply = None, {"status": "failed", "error": describe(exc)}
        # Heard before the reply goes: the client may act on it at once (a test reads the log).
        if request is not None and self._on_request is not None:
            self._on_request(*request)
        connection.send_bytes(json.dumps(reply).encode())

    def _dispatch(self, message: object) -> tuple[tuple[OcrRequest, OcrReply] | None, dict]:
        if not isinstance(message, dict):
            raise ValueError("The request is not a DeskLens OCR request.")
        if message.get("op") == "ping":
            return None, {"pid": os.getpid()}
        if message.get("op") == "open":
            return None, {"opened": self._open(message)}
        if message.get("op") == "capture":
            return None, {"capturing": self._capture(message)}
        path, fmt = message.get("path"), message.get("format")
        if not isinstance(path, str) or not isinstance(fmt, str):
            raise ValueError("The request is not a DeskLens OCR request.")
        request = OcrRequest(path=path, format=fmt)
        reply = self._read(request)
        return (request, reply), asdict(reply)

    def _read(self, request: OcrRequest) -> OcrReply:
        started = time.perf_counter()
        try:
            reply = self._handler(request, self._stopping)
        except Exception as exc:  # the service must outlive any one request
            reply = OcrReply("failed", error=f"Could not read {request.path}: {describe(exc)}")
        if self._stopping.is_set():
            reply = OcrReply("stopped")  # possibly cut short: not an answer to print
        self.last_request_at = time.monotonic()
        return replace(reply, seconds=time.perf_counter() - started)

    def _open(self, message: dict) -> bool:
        paths = message.get("paths")
        if self._on_open is None or not isinstance(paths, list):
            return False
        try:
            if message.get("extract") is True and self._on_extract is not None:
                self._on_extract([str(path) for path in paths])
            self._on_open([str(path) for path in paths])
            model = message.get("model")
            if model and isinstance(model, str) and self._on_model is not None:
                self._on_model(model)
        except Exception:  # e.g. the window is closing: the client starts its own
            return False
        return True

    def _capture(self, message: dict) -> bool:
        mode = message.get("mode")
        if self._on_capture is None or not isinstance(mode, str):
            return False
        try:
            self._on_capture(mode)
        except Exception:  # the window is closing: the client captures by itself
            return False
        return True

    def _remove_key(self) -> None:
        self.endpoint.key_file.unlink(missing_ok=True)
