"""A model server is untrusted input: what it sends is capped before the openai client reads it.

The openai client reads an error body whole and joins a `data:` line until its newline, so a
server could fill the memory with one 200 MB line or body. Every response passes through
`CappedTransport`: an error body is cut at ERROR_BODY_BYTES (its message is a sentence's worth),
a stream ends with `BadReply` (a sentence) at a line longer than LINE_BYTES or an answer past
STREAM_BYTES. The answer's length in tokens is held by the engine (`_Reply`). A compressed
body is inflated here, a piece at a time, so that the caps count the bytes it inflates to (a
gzip body of a 400 MB line is 400 KB on the wire); an encoding other than gzip or deflate is
refused, since it could not be inflated piece by piece.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import zlib
from collections.abc import Iterator
from functools import partial
from typing import Any

import httpx2

LINE_BYTES = 1 << 20  # one SSE line (one event's JSON): a chunk of a few tokens is < 1 KB
STREAM_BYTES = 64 << 20  # a whole streamed answer, its JSON framing included
ERROR_BODY_BYTES = 64 << 10  # an error's body: its message is read from the first 64 KB
INFLATED_PIECE = 64 << 10  # a compressed body is inflated this many bytes at a time
_ENCODINGS = ("gzip", "x-gzip", "deflate")


class BadReply(Exception):
    """The server sent more than the client takes, or what it cannot be: str() ends the sentence
    "The server at HOST ..." ('it sent a line longer than 1 MB')."""


class CappedTransport(httpx2.HTTPTransport):
    """httpx2 (the openai client's HTTP layer), every response body capped (the docstring above)."""

    def __init__(self) -> None:
        # A connection of its own per request, so that its socket is known (`_opened`): a read
        # timeout restarts at every byte, and headers trickled a byte at a time would hold the
        # client for hours; here they must all come within the read timeout.
        super().__init__(limits=httpx2.Limits(max_keepalive_connections=0))

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "gzip, deflate"  # the two inflated piece by piece
        opened: list[socket.socket] = []
        request.extensions = {**request.extensions, "trace": partial(_opened, opened)}
        limit = float((request.extensions.get("timeout") or {}).get("read") or 0)
        late = threading.Event()
        timer = threading.Timer(limit, _cut, (opened, late))
        if limit:
            timer.daemon = True
            timer.start()
        try:
            response = super().handle_request(request)
        except httpx2.TransportError:
            if late.is_set():
                raise _headers_late(request, limit) from None
            raise
        finally:
            timer.cancel()
        if late.is_set():  # complete just as the time ran out: the socket is shut already
            response.close()
            raise _headers_late(request, limit)
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream)
        encodings = response.headers.get_list("content-encoding", split_commas=True)
        if encodings:
            del response.headers["content-encoding"]  # inflated here: the client must not again
            for encoding in reversed(encodings):
                stream = _Inflated(stream, encoding.strip().lower())
        if response.status_code >= 400:
            response.stream = _Capped(stream, total=ERROR_BODY_BYTES, cut=True)
        else:
            response.stream = _Capped(stream, total=STREAM_BYTES, line=LINE_BYTES)
        return response


def _opened(sockets: list[socket.socket], event: str, info: dict[str, Any]) -> None:
    """httpcore's trace: keeps the socket of the connection the request opened."""
    if event.endswith(".connect_tcp.complete"):
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if sock is not None:
            sockets.append(sock)


def _cut(sockets: list[socket.socket], late: threading.Event) -> None:
    late.set()
    for sock in sockets:  # shut down, a blocked read ends at once (a close would not wake it)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _headers_late(request: httpx2.Request, limit: float) -> httpx2.ReadTimeout:
    return httpx2.ReadTimeout(f"its reply's headers took more than {limit:g} s", request=request)


class _Inflated(httpx2.SyncByteStream):
    """A gzip or deflate body inflated INFLATED_PIECE bytes at a time (never a bomb at once)."""

    def __init__(self, inner: httpx2.SyncByteStream, encoding: str) -> None:
        self.inner, self.encoding = inner, encoding

    def __iter__(self) -> Iterator[bytes]:
        if self.encoding == "identity":
            yield from self.inner
            return
        if self.encoding not in _ENCODINGS:
            raise BadReply(
                f"it sent its answer in an encoding DeskLens does not read ({self.encoding[:20]!r})"
            )
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or zlib header
        try:
            for part in self.inner:
                while part:
                    piece = inflater.decompress(part, INFLATED_PIECE)
                    part = inflater.unconsumed_tail
                    if piece:
                        yield piece
            if tail := inflater.flush():
                yield tail
        except zlib.error:
            raise BadReply(f"it sent a {self.encoding} body that does not inflate") from None

    def close(self) -> None:
        self.inner.close()


class _Capped(httpx2.SyncByteStream):
    def __init__(
        self,
        inner: httpx2.SyncByteStream,
        *,
        total: int,
        line: int | None = None,
        cut: bool = False,
    ) -> None:
        self.inner, self.total, self.line, self.cut = inner, total, line, cut

    def __iter__(self) -> Iterator[bytes]:
        seen, since_newline = 0, 0
        for part in self.inner:
            if seen + len(part) > self.total:
                if self.cut:  # an error body: its start is enough
                    yield part[: self.total - seen]
                    return
                raise BadReply(f"it sent more than {self.total >> 20} MB for one answer")
            seen += len(part)
            if self.line is not None:
                newline = max(part.rfind(b"\n"), part.rfind(b"\r"))
                since_newline = (
                    len(part) - newline - 1 if newline >= 0 else since_newline + len(part)
                )
                if since_newline > self.line:
                    raise BadReply(f"it sent a line longer than {self.line >> 20} MB")
            yield part

    def close(self) -> None:
        self.inner.close()
