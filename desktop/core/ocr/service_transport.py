"""Where the OCR service listens, who may get in, and how long anyone may keep it waiting.

The socket lives in `<data dir>/run/` (0700). A data folder too deep for a socket path (~100
bytes) moves it to `$XDG_RUNTIME_DIR` (per user, 0700, set by the login session), else on
Linux to an abstract socket (no file at all, so nothing to pre-create or symlink), else to a
folder in the temporary folder. Every folder is checked without following a symbolic link
(`O_NOFOLLOW`), must belong to this user, and is refused otherwise, never chmod-ed through a
link. Whatever the address, both sides prove the shared key (HMAC challenge) before a request
is sent, under HANDSHAKE_TIMEOUT: a client that connects and stays silent costs one thread for
a few seconds, never the service. Standard library only (the client imports this).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import struct
import sys
import tempfile
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import (
    Client,
    Connection,
    answer_challenge,
    deliver_challenge,
)
from pathlib import Path

from desktop.core import atomic
from desktop.core.paths import user_data_dir

UNIX_PATH_LIMIT = 100  # sun_path holds 104-108 bytes depending on the system
HANDSHAKE_TIMEOUT = 5.0  # seconds a peer may take to answer the challenge or send a request
REPLY_SEND_TIMEOUT = 30.0  # seconds a client may leave a reply unread before it is dropped
KEY_BYTES = 32


class FolderRefused(OSError):
    """The socket folder is not this user's own; str() says why in one sentence."""


@dataclass(frozen=True)
class Endpoint:
    address: str  # socket path, "\0name" (a Linux abstract socket) or a pipe name (Windows)
    family: str  # "AF_UNIX" or "AF_PIPE", as multiprocessing.connection names them
    key_file: Path

    @property
    def is_pipe(self) -> bool:
        return self.family == "AF_PIPE"

    @property
    def is_abstract(self) -> bool:
        return self.address.startswith("\0")

    @property
    def socket_folder(self) -> Path | None:
        """The folder holding the socket file, if there is one."""
        return None if self.is_pipe or self.is_abstract else Path(self.address).parent


def default_endpoint(data_dir: Path | None = None) -> Endpoint:
    """Where this user's service listens; one per data folder (`data_dir`, by default the
    user's: DESKLENS_DATA_DIR included), so one app per data folder takes the files."""
    folder = (data_dir or user_data_dir()).absolute() / "run"
    tag = hashlib.sha256(str(folder).encode()).hexdigest()[:12]
    if sys.platform == "win32":
        return Endpoint(rf"\\.\pipe\DeskLens-ocr-{tag}", "AF_PIPE", folder / "ocr.key")
    return Endpoint(_socket_address(folder, tag), "AF_UNIX", folder / "ocr.key")


def _socket_address(folder: Path, tag: str) -> str:
    candidates = [folder / "ocr.sock"]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute():
        candidates.append(Path(runtime) / f"desklens-{tag}" / "ocr.sock")
    for candidate in candidates:
        if len(os.fsencode(candidate)) <= UNIX_PATH_LIMIT:
            return str(candidate)
    if sys.platform.startswith("linux"):
        return f"\0desklens-{os.getuid()}-{tag}"
    return str(Path(tempfile.gettempdir()) / f"desklens-{os.getuid()}-{tag}" / "ocr.sock")


def private_folder(folder: Path) -> None:
    """Creates `folder` (0700) for this user; raises FolderRefused for a symbolic link, a
    non-folder or a folder that belongs to someone else. A too-open mode of our own folder is
    tightened through a descriptor opened without following links."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    if not hasattr(os, "getuid"):
        return  # Windows: the pipe has no folder; the data folder is the user's profile
    if os.path.islink(folder):
        raise FolderRefused(f"{folder} is a symbolic link; DeskLens does not follow it.")
    try:
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:  # replaced by a link or a file since: refuse, do not retry
        raise FolderRefused(f"{folder} is not a folder DeskLens can use ({exc.strerror}).") from exc
    try:
        info = os.fstat(handle)
        if info.st_uid != os.getuid():
            raise FolderRefused(
                f"{folder} belongs to another user; DeskLens does not use it. Remove it, or "
                "set XDG_RUNTIME_DIR to a folder of your own."
            )
        if info.st_mode & 0o077:
            os.fchmod(handle, 0o700)
    finally:
        os.close(handle)


def write_key(endpoint: Endpoint) -> bytes:
    """A fresh secret in a file only this user can read, replaced atomically."""
    private_folder(endpoint.key_file.parent)
    key = os.urandom(KEY_BYTES)
    atomic.write_bytes(endpoint.key_file, key, private=True)
    return key


def read_key(endpoint: Endpoint) -> bytes | None:
    try:
        with endpoint.key_file.open("rb") as file:
            return file.read(KEY_BYTES + 1)
    except OSError:
        return None


def connect(endpoint: Endpoint) -> Connection | None:
    """An authenticated connection to the service, or None (no service, a stale socket, a key
    from another run, or a peer that does not complete the challenge in time)."""
    if not endpoint.is_pipe and not endpoint.is_abstract and not os.path.exists(endpoint.address):
        return None  # no service: no socket is even created
    key = read_key(endpoint)
    if key is None:
        return None
    try:
        connection = Client(endpoint.address, endpoint.family)
    except OSError:
        return None
    try:
        set_timeouts(connection, HANDSHAKE_TIMEOUT, HANDSHAKE_TIMEOUT)
        answer_challenge(connection, key)
        deliver_challenge(connection, key)
        set_timeouts(connection, None, None)  # the reply takes as long as the reading does
    except (OSError, EOFError, AuthenticationError, ValueError):
        connection.close()
        return None
    return connection


def authenticate(connection: Connection, key: bytes) -> None:
    """The service's side of the challenge; raises on a peer without the key or too slow."""
    set_timeouts(connection, HANDSHAKE_TIMEOUT, REPLY_SEND_TIMEOUT)
    deliver_challenge(connection, key)
    answer_challenge(connection, key)


def set_timeouts(connection: Connection, receive: float | None, send: float | None) -> None:
    """Per-call receive and send timeouts on a Unix socket connection (a blocked call then
    fails with an OSError). Named pipes have none; their peers are this user's processes."""
    if sys.platform == "win32":
        return
    with socket.socket(fileno=os.dup(connection.fileno())) as view:  # same socket, own fd
        for option, seconds in ((socket.SO_RCVTIMEO, receive), (socket.SO_SNDTIMEO, send)):
            whole = int(seconds or 0)
            micro = int(((seconds or 0) - whole) * 1e6)
            view.setsockopt(socket.SOL_SOCKET, option, struct.pack("ll", whole, micro))


def shut(connection: Connection) -> None:
    """Wakes a thread blocked reading `connection` (it then sees the end of the stream)."""
    if sys.platform == "win32":
        connection.close()
        return
    with contextlib.suppress(OSError), socket.socket(fileno=os.dup(connection.fileno())) as view:
        view.shutdown(socket.SHUT_RDWR)


def wake(endpoint: Endpoint) -> None:
    """A bare connection, closed at once: it wakes a thread blocked in accept()."""
    with contextlib.suppress(OSError):
        Client(endpoint.address, endpoint.family).close()
