"""Who may use the local API: this user's programs, never a web page in this user's browser.

Every HTTP request passes `Guard` before any route sees it, in this order:
- `Host` must name the loopback interface (localhost, 127.0.0.1, [::1]): a page on a domain
  that a rebinding DNS answer points at 127.0.0.1 still sends its own domain as Host;
- a browser's cross-origin request (an `Origin` header, or `Sec-Fetch-Site` cross-site or
  same-site) is refused unless the user added that origin; only such origins get CORS headers;
- `Authorization: Bearer <token>` must carry the token kept 0600 in the data folder (a page
  cannot read the file, and a cross-origin page cannot send the header without CORS);
- the body is read here, within a size limit and time limits (for the whole body and for its
  next bytes), before the route runs; a declared Content-Length over the limit is answered
  413 at once, before any of it is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import Response

from desktop.core.api.errors import ApiError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
# A body over the limit is still read (and dropped) up to this, so that the client, which
# sends its whole body before reading, gets the 413 instead of a reset connection.
DRAIN_FACTOR = 4


@dataclass(frozen=True)
class AccessPolicy:
    token: str
    max_body_bytes: int
    body_timeout_s: float
    allowed_origins: frozenset[str] = frozenset()
    read_timeout_s: float = 5.0

    def refusal(self, headers: Headers, method: str) -> ApiError | None:
        """Why this request may not go on, or None."""
        host = headers.get("host", "")
        if _host_name(host) not in LOOPBACK_HOSTS:
            return ApiError(
                403, f"Host {host!r} is not this computer's loopback address.", "bad_host"
            )
        origin = headers.get("origin")
        cross = headers.get("sec-fetch-site", "") in ("cross-site", "same-site")
        if (origin is not None or cross) and origin not in self.allowed_origins:
            return ApiError(
                403,
                f"Requests from web pages are refused (origin {origin or 'unknown'}); "
                "allowed origins are set by the user.",
                "origin_not_allowed",
            )
        if method == "OPTIONS":
            return None  # a CORS preflight of an allowed origin carries no token
        given = headers.get("authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), self.token.encode()
        ):
            return ApiError(
                401, "A valid API token is required (Authorization: Bearer ...).", "invalid_api_key"
            )
        return None


def _host_name(host: str) -> str:
    """`Host` without its port, lower case ("[::1]:8765" -> "[::1]")."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware enforcing an AccessPolicy, then handing the app the body it read."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        send = _with_cors(send, origin) if origin in self.policy.allowed_origins else send
        refusal = self.policy.refusal(headers, scope["method"])
        if refusal is None and scope["method"] == "OPTIONS":
            await Response(status_code=204, headers=_preflight_headers())(scope, receive, send)
            return
        if refusal is None and _declared_size(headers) > self.policy.max_body_bytes:
            await self._too_large(scope, receive, send)
            return
        if refusal is None:
            body, refusal = await self._read_body(receive)
        if refusal is not None:
            await _closing(refusal)(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _over_limit(self) -> ApiError:
        megabytes = self.policy.max_body_bytes / (1 << 20)
        return ApiError(
            413, f"The request body is over the {megabytes:g} MiB limit.", "body_too_large"
        )

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The 413 at once, whole; the response is ended (and the connection closed) only
        after what the client sends meanwhile was read and dropped (up to the drain limit, while
        bytes keep coming), so that a client that writes its body before it reads sees it."""
        response = _closing(self._over_limit())
        start = {"status": response.status_code, "headers": response.raw_headers}
        await send({"type": "http.response.start", **start})
        await send({"type": "http.response.body", "body": response.body, "more_body": True})
        idle = _idle_limited(receive, self.policy.read_timeout_s)
        drain = self.policy.max_body_bytes * DRAIN_FACTOR
        with contextlib.suppress(asyncio.TimeoutError, _Disconnected):
            await asyncio.wait_for(_read(idle, 0, drain), self.policy.body_timeout_s)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _read_body(self, receive: Receive) -> tuple[bytes, ApiError | None]:
        limit = self.policy.max_body_bytes
        idle = _idle_limited(receive, self.policy.read_timeout_s)
        try:
            body, total = await asyncio.wait_for(
                _read(idle, limit, limit * DRAIN_FACTOR), self.policy.body_timeout_s
            )
        except asyncio.TimeoutError:
            return b"", ApiError(408, "The request body did not arrive in time.", "timeout")
        except _Disconnected:
            return b"", ApiError(400, "The client went away.", "disconnected")
        if total > limit:
            return b"", self._over_limit()
        return body, None


class _Disconnected(Exception):
    pass


def _closing(refusal: ApiError) -> Response:
    """The refusal's response, closing the connection: the body was not read (or not all of
    it), so the connection cannot carry another request."""
    response = refusal.response()
    response.headers["connection"] = "close"
    return response


def _declared_size(headers: Headers) -> int:
    """The Content-Length (0 when absent; h11 has already refused a malformed one)."""
    value = headers.get("content-length", "")
    return int(value) if value.isdigit() else 0


def _idle_limited(receive: Receive, timeout_s: float) -> Receive:
    """`receive` that gives up (TimeoutError) when no bytes come for `timeout_s`."""

    async def receive_in_time() -> Message:
        return await asyncio.wait_for(receive(), timeout_s)

    return receive_in_time


async def _read(receive: Receive, limit: int, drain: int) -> tuple[bytes, int]:
    """The body (empty once over `limit`) and its size; reading stops past `drain` bytes."""
    parts: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        total += len(chunk)
        if total <= limit:
            parts.append(chunk)
        else:
            parts.clear()
        if not message.get("more_body") or total > drain:
            return b"".join(parts), total


def _replay(body: bytes, receive: Receive) -> Receive:
    """The app's receive: the body once, then the real one (which reports a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


def _with_cors(send: Send, origin: str) -> Send:
    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            extra = [(b"access-control-allow-origin", origin.encode()), (b"vary", b"Origin")]
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return send_with_cors


def _preflight_headers() -> dict[str, str]:
    return {
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
        "Access-Control-Allow-Headers": "Authorization, Content-Type",
        "Access-Control-Max-Age": "600",
    }
