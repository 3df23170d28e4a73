"""Connections that cannot take the API away: uvicorn's HTTP/1.1 protocol with a deadline for
each request head and a cap on open connections that drops the oldest idle one.

uvicorn alone closes a connection only after a response (keep-alive): one that never sends a
byte, or sends half a request line and stops, stays open for good, and past
`limit_concurrency` every new client gets 503. Here:
- a request head (request line and headers) must be complete within `head_timeout_s` of the
  connection opening or of the previous response, however slowly its bytes drip in;
- past `max_connections`, a new connection closes the oldest one that has no request under
  way (silent, half-sent or idle keep-alive), so a client that sends its request at once is
  served while any number of junk connections come and go; connections with requests under
  way are never dropped (their number is bounded by the queues, which answer 429).
The body has its own limits (security.Guard): an idle-read timeout and a total one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 1024
FILE_LIMIT = 4096  # open files the process asks for (above MAX_CONNECTIONS plus the app's own)


class _Registry:
    """The open connections of one server, oldest first."""

    def __init__(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self.open: dict[GuardedH11, None] = {}

    def admit(self, new: GuardedH11) -> None:
        self.open[new] = None
        if len(self.open) <= self.max_connections:
            return
        idle = next((c for c in self.open if c is not new and c.between_requests), None)
        (idle or new).drop()


class GuardedH11(H11Protocol):
    """H11Protocol with a head deadline and a connection cap (see the module's docstring)."""

    head_timeout_s: float = HEAD_TIMEOUT_S
    registry: _Registry
    _head_timer: asyncio.TimerHandle | None = None  # set per connection by _arm

    @property
    def between_requests(self) -> bool:
        """No request under way: waiting for (the rest of) a request head."""
        return self.cycle is None or self.cycle.response_complete

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()
        self.registry.admit(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.registry.open.pop(self, None)
        super().connection_lost(exc)

    def handle_events(self) -> None:
        super().handle_events()
        if not self.between_requests:
            self._disarm()  # a whole head arrived: the body and the answer have their limits

    def on_response_complete(self) -> None:
        self._arm()  # the next head (keep-alive) has the same deadline
        super().on_response_complete()

    def drop(self) -> None:
        self.registry.open.pop(self, None)
        self._disarm()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_too_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_late(self) -> None:
        self._head_timer = None
        if self.between_requests:
            self.drop()


def protocol(head_timeout_s: float, max_connections: int) -> type[GuardedH11]:
    """The protocol class for one server (its own registry and limits)."""
    return type(
        "DeskLensH11",
        (GuardedH11,),
        {"head_timeout_s": head_timeout_s, "registry": _Registry(max_connections)},
    )


def raise_file_limit(wanted: int = FILE_LIMIT) -> None:
    """Lets the process hold `wanted` open files where the soft limit is lower (Linux and
    macOS often start at 1024 or 256), so that the cap, not the system, decides."""
    if os.name != "posix":
        return
    import resource

    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            top = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))
