"""A warm OCR engine that answers `desklens ocr` from another process, over a local socket.

A one-shot `desklens ocr` spends about a second before it reads anything: starting Python,
importing OpenVINO, compiling the models and meeting each input shape for the first time,
more than reading a screenshot takes on a warm engine. A process that keeps the engine warm
(`desklens serve`, or the open desktop app) answers instead, and the client imports nothing
heavy (this module needs only the standard library).

Only the same user gets in: on POSIX the socket lives in a 0700 folder, and every connection
must also pass an HMAC challenge keyed by a random secret kept in a 0600 file beside it (a
Windows named pipe has no folder to protect it). Messages are JSON; nothing is pickled.
The service reads one file per request, in the order requests arrive. The open app's service
also takes files to attach (`desklens shot.png` while DeskLens is open: one window, one model
in memory).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from multiprocessing.connection import AuthenticationError, Client, Connection, Listener
from pathlib import Path
from typing import Literal

from desktop.core.paths import user_data_dir

# What the CLI turns into its exit code; "stopped": the service closed mid-request (the
# client then reads the file itself).
Status = Literal["ok", "input", "model", "failed", "stopped"]
MAX_MESSAGE_BYTES = 1 << 20  # a request is a path and a format name
MAX_REPLY_BYTES = 64 << 20  # the text of a long PDF
_UNIX_PATH_LIMIT = 100  # sun_path holds 104-108 bytes depending on the system


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


@dataclass(frozen=True)
class Endpoint:
    address: str  # socket path (POSIX) or pipe name (Windows)
    family: str  # "AF_UNIX" or "AF_PIPE", as multiprocessing.connection names them
    key_file: Path

    @property
    def is_pipe(self) -> bool:
        return self.family == "AF_PIPE"


def default_endpoint() -> Endpoint:
    """Where this user's service listens; one per data folder (DESKLENS_DATA_DIR included)."""
    folder = user_data_dir() / "run"
    tag = hashlib.sha256(str(folder).encode()).hexdigest()[:12]
    if sys.platform == "win32":
        return Endpoint(rf"\\.\pipe\DeskLens-ocr-{tag}", "AF_PIPE", folder / "ocr.key")
    socket_path = folder / "ocr.sock"
    if len(os.fsencode(socket_path)) > _UNIX_PATH_LIMIT:  # a deep data folder: a short home
        socket_path = Path(tempfile.gettempdir()) / f"desklens-{os.getuid()}-{tag}" / "ocr.sock"
    return Endpoint(str(socket_path), "AF_UNIX", folder / "ocr.key")


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


def hand_to_open_app(paths: Sequence[str | os.PathLike], endpoint: Endpoint | None = None) -> bool:
    """True when a running DeskLens window took the files (it attaches them and comes to the
    front); False when none runs, or only `desklens serve`."""
    reply = _exchange({"op": "open", "paths": [os.path.abspath(p) for p in paths]}, endpoint)
    return reply is not None and reply.get("opened") is True


def ping(endpoint: Endpoint | None = None) -> int | None:
    """The process id of the service listening there, or None."""
    reply = _exchange({"op": "ping"}, endpoint)
    pid = reply.get("pid") if reply is not None else None
    return pid if isinstance(pid, int) else None


def _exchange(message: dict, endpoint: Endpoint | None) -> dict | None:
    """One JSON message out, one JSON object back; None when no service answers."""
    endpoint = endpoint or default_endpoint()
    if not endpoint.is_pipe and not os.path.exists(endpoint.address):
        return None
    connection = _connect(endpoint)
    if connection is None:
        return None
    with connection:
        try:
            connection.send_bytes(json.dumps(message).encode())
            reply = json.loads(connection.recv_bytes(MAX_REPLY_BYTES))
        except (OSError, EOFError, ValueError):
            return None  # the service went away mid-request: the caller reads it itself
    return reply if isinstance(reply, dict) else None


class OcrService:
    """Listens on a background thread and answers each request with `handler`.

    `start()` raises ServiceError when another service already answers at the endpoint;
    `stop()` ends the thread and removes the socket and key. `on_request` hears of each
    answered request (for a log line); `on_open` takes files handed over by `desklens FILE`
    (called on the service thread).
    """

    def __init__(
        self,
        handler: Handler,
        *,
        endpoint: Endpoint | None = None,
        on_request: Callable[[OcrRequest, OcrReply], None] | None = None,
        on_open: Callable[[list[str]], None] | None = None,
    ) -> None:
        self.endpoint = endpoint or default_endpoint()
        self.last_request_at = time.monotonic()
        self._handler = handler
        self._on_request = on_request
        self._on_open = on_open
        self._listener: Listener | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self) -> None:
        running = ping(self.endpoint)
        if running is not None:
            raise ServiceError(f"A DeskLens OCR service is already running (process {running}).")
        try:
            key = self._write_key()
            if not self.endpoint.is_pipe:
                _private_folder(Path(self.endpoint.address).parent)
                Path(self.endpoint.address).unlink(missing_ok=True)  # left by a killed service
            self._listener = Listener(
                self.endpoint.address, self.endpoint.family, backlog=16, authkey=key
            )
        except OSError as exc:
            self._remove_key()
            raise ServiceError(f"The OCR service could not start: {exc}") from exc
        # A daemon: an owner that never calls stop() must still be able to exit (the socket
        # it leaves behind is then refused, and replaced by the next service).
        self._thread = threading.Thread(
            target=self._serve, name="desklens-ocr-service", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Asks the request in progress to end (its client then reads the file itself), waits
        for it, then closes; safe to call twice."""
        if self._thread is None:
            return
        self._stopping.set()
        # Wake a blocked accept() with a bare connection that never waits for an answer:
        # the thread may be finishing a request, and then it never accepts again.
        with contextlib.suppress(OSError):
            Client(self.endpoint.address, self.endpoint.family).close()
        self._thread.join()
        self._thread = None
        if self._listener is not None:
            self._listener.close()  # removes the socket file
            self._listener = None
        self._remove_key()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _serve(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                connection = self._listener.accept()
            except (OSError, EOFError, AuthenticationError):
                continue  # a client that failed the challenge or hung up: not our problem
            with connection:
                if not self._stopping.is_set():
                    self._answer(connection)

    def _answer(self, connection: Connection) -> None:
        try:
            message = json.loads(connection.recv_bytes(MAX_MESSAGE_BYTES))
            if message.get("op") == "ping":
                connection.send_bytes(json.dumps({"pid": os.getpid()}).encode())
                return
            if message.get("op") == "open":
                connection.send_bytes(json.dumps({"opened": self._open(message)}).encode())
                return
            request = OcrRequest(path=str(message["path"]), format=str(message["format"]))
        except (OSError, EOFError, ValueError, KeyError, AttributeError, TypeError):
            return  # not one of our clients, or it hung up
        started = time.perf_counter()
        try:
            reply = self._handler(request, self._stopping)
        except Exception as exc:  # the service must outlive any one request
            from desktop.core.errors import describe

            reply = OcrReply("failed", error=f"Could not read {request.path}: {describe(exc)}")
        if self._stopping.is_set():
            reply = OcrReply("stopped")  # possibly cut short: not an answer to print
        reply = replace(reply, seconds=time.perf_counter() - started)
        self.last_request_at = time.monotonic()
        try:
            connection.send_bytes(json.dumps(asdict(reply)).encode())
        except OSError:
            return  # the client gave up waiting
        if self._on_request is not None:
            self._on_request(request, reply)

    def _open(self, message: dict) -> bool:
        paths = message.get("paths")
        if self._on_open is None or not isinstance(paths, list):
            return False
        try:
            self._on_open([str(path) for path in paths])
        except Exception:  # e.g. the window is closing: the client starts its own
            return False
        return True

    def _write_key(self) -> bytes:
        """A fresh secret in a file only this user can read, replaced atomically."""
        key = secrets.token_bytes(32)
        folder = self.endpoint.key_file.parent
        _private_folder(folder)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".key-")  # created 0600
        with os.fdopen(handle, "wb") as file:
            file.write(key)
        os.replace(temporary, self.endpoint.key_file)
        return key

    def _remove_key(self) -> None:
        self.endpoint.key_file.unlink(missing_ok=True)


def _connect(endpoint: Endpoint) -> Connection | None:
    try:
        return Client(endpoint.address, endpoint.family, authkey=endpoint.key_file.read_bytes())
    except (OSError, EOFError, AuthenticationError):
        return None  # no service, a stale socket, or a key from another run


def _private_folder(folder: Path) -> None:
    """Creates `folder` for this user only; refuses one that someone else owns."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if hasattr(os, "getuid"):
        info = folder.stat()
        if info.st_uid != os.getuid():
            raise OSError(f"{folder} belongs to another user")
        if info.st_mode & 0o077:
            folder.chmod(0o700)
