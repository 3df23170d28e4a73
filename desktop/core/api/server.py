"""The API's HTTP server: uvicorn on its own thread, on loopback sockets it binds itself.

Why uvicorn + Starlette and not the standard library's http.server: the chat endpoint streams
server-sent events for as long as an answer takes while other clients are queued, refused
(429) or served OCR, so the server must hold many slow connections at once and notice a client
that leaves mid-stream (to stop its answer). An asyncio server does that on one thread with a
maintained HTTP/1.1 parser (h11); ThreadingHTTPServer would need a thread per waiting client
and hand-written chunked encoding and disconnect detection.

The sockets are bound here, to 127.0.0.1 and ::1 only, and handed to uvicorn, so no setting
can make it listen on another interface, and the addresses can be checked from the sockets.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import sys
import threading
from dataclasses import dataclass, field

import uvicorn

from desktop.core.api import DEFAULT_PORT, connections
from desktop.core.api.routes import ApiBackend, ApiRoutes, Limits, build_app
from desktop.core.api.security import AccessPolicy, Guard

logger = logging.getLogger(__name__)

# Images up to the app's own limits (images.MAX_PIXELS) arrive as base64 in JSON; 16 MiB holds
# a ~12 MB PNG or JPEG, far above a screenshot or a page scan.
MAX_BODY_BYTES = 16 << 20
START_TIMEOUT_S = 30.0


class ApiStartError(Exception):
    """The server could not start; str(error) says why in one sentence."""


@dataclass(frozen=True)
class ApiSettings:
    port: int = DEFAULT_PORT  # 0: any free port (tests)
    max_body_bytes: int = MAX_BODY_BYTES
    max_waiting: int = 8  # chat requests waiting for the engine; 429 past it
    request_timeout_s: float = 600.0
    body_timeout_s: float = 30.0  # the whole body
    read_timeout_s: float = 5.0  # the body's next bytes
    head_timeout_s: float = connections.HEAD_TIMEOUT_S  # request line and headers
    max_connections: int = connections.MAX_CONNECTIONS  # past it, the oldest idle one closes
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)  # CORS, added by the user


class ApiServer:
    """`start()` binds and serves on a daemon thread; `stop()` ends it (safe to call twice)."""

    def __init__(
        self, backend: ApiBackend, token: str, settings: ApiSettings | None = None
    ) -> None:
        self.settings = settings or ApiSettings()
        self.backend = backend
        self.routes = ApiRoutes(
            backend, Limits(self.settings.request_timeout_s, self.settings.max_waiting)
        )
        policy = AccessPolicy(
            token,
            self.settings.max_body_bytes,
            self.settings.body_timeout_s,
            frozenset(self.settings.allowed_origins),
            self.settings.read_timeout_s,
        )
        self._started = threading.Event()
        self._app = Guard(build_app(self.routes), policy)
        self._sockets: list[socket.socket] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._sockets[0].getsockname()[1] if self._sockets else self.settings.port

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """(host, port) of every listening socket, as the sockets themselves report them."""
        return [sock.getsockname()[:2] for sock in self._sockets]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        connections.raise_file_limit()
        self._sockets = bind_loopback(self.settings.port)
        config = uvicorn.Config(
            self._app,
            http=connections.protocol(self.settings.head_timeout_s, self.settings.max_connections),
            ws="none",
            loop="asyncio",
            lifespan="off",
            log_config=None,  # the host's logging stays as it is
            log_level="warning",
            access_log=False,
            server_header=False,
            timeout_keep_alive=5,
            timeout_graceful_shutdown=5,
            # Connections are capped by the protocol (the oldest idle one goes); uvicorn's own
            # cap would answer 503 to everyone while junk connections stay open.
            limit_concurrency=None,
            h11_max_incomplete_event_size=64 * 1024,  # request line and headers
        )
        self._server = _Server(config, self._started)
        self._thread = threading.Thread(target=self._serve, name="desklens-api", daemon=True)
        self._thread.start()
        self._started.wait(START_TIMEOUT_S)
        if not (self.running and self._server.started):
            self.stop()
            raise ApiStartError("The local API server did not start.")

    def stop(self, timeout: float = 10.0) -> None:
        """Refuses what waits, ends the answers under way, closes the sockets."""
        self.backend.jobs.close()
        self.routes.cancel_all()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive() and self._server is not None:
                self._server.force_exit = True
                self._thread.join(timeout)
            self._thread = None
        for sock in self._sockets:
            sock.close()

    def _serve(self) -> None:
        try:
            assert self._server is not None
            self._server.run(sockets=self._sockets)
        except Exception:  # the thread must report, not die silently
            logger.exception("the local API server failed")
        finally:
            self._started.set()  # start() waits no longer


class _Server(uvicorn.Server):
    """Says when it listens (uvicorn itself only sets a flag)."""

    def __init__(self, config: uvicorn.Config, started: threading.Event) -> None:
        super().__init__(config)
        self._listening = started

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self._listening.set()


def bind_loopback(port: int) -> list[socket.socket]:
    """Listening sockets on 127.0.0.1 and (where the system has IPv6) ::1, on one port."""
    first = _listen(socket.AF_INET, "127.0.0.1", port)
    sockets = [first]
    with contextlib.suppress(OSError):  # no IPv6 on this machine, or ::1 taken: IPv4 only
        sockets.append(_listen(socket.AF_INET6, "::1", first.getsockname()[1]))
    return sockets


def _listen(family: socket.AddressFamily, host: str, port: int) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if sys.platform == "win32":  # no other process may take over the port while we hold it
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        else:  # restartable at once after a stop (TIME_WAIT)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((host, port))
        sock.listen(1024)  # a burst of connections waits here instead of being retried
    except OSError as exc:
        sock.close()
        if family == socket.AF_INET6:
            raise
        raise ApiStartError(
            f"The local API could not listen on {host}:{port}: {exc.strerror or exc}."
        ) from exc
    sock.setblocking(False)
    return sock
