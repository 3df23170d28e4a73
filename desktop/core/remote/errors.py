"""What went wrong with the server, in one sentence each: the user reads these, so they say what
happened and what to do, and never carry the key."""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

from desktop.core.chat import ErrorKind

if TYPE_CHECKING:
    import openai


class RemoteError(Exception):
    """A server problem, already put as a sentence; `status` is the HTTP status, if any."""

    def __init__(self, sentence: str, status: int | None = None) -> None:
        super().__init__(sentence)
        self.status = status


def describe_failure(exc: BaseException, host: str, model: str = "") -> str:
    """The sentence for an exception of the openai client (or the HTTP layer under it)."""
    import openai

    from desktop.core.remote.limits import BadReply

    if isinstance(exc, RemoteError):
        return str(exc)
    bad = next((e for e in _chain(exc) if isinstance(e, BadReply)), None)
    if bad is not None:
        return f"The answer from the server at {host} stops here: {bad}."
    if isinstance(exc, ValueError) and "JSON" in type(exc).__name__ + str(exc):
        return f"The server at {host} sent a chunk that is not JSON; the answer stops there."
    if isinstance(exc, openai.APIStatusError):
        return _status_sentence(exc, host, model)
    if isinstance(exc, openai.APITimeoutError):
        return f"The server at {host} did not answer in time. Try again, or check the server."
    if isinstance(exc, openai.APIConnectionError):
        return _connection_sentence(exc, host)
    return f"The server at {host} failed: {_root_message(exc)}."


def _connection_sentence(exc: BaseException, host: str) -> str:
    if _tls_failure(exc) is not None:
        return (
            f"The secure connection to {host} failed: its certificate could not be "
            f"verified ({_tls_failure(exc)}). Check the address, or ask the server's "
            "administrator for a certificate this computer trusts."
        )
    if _not_http(exc):
        return (
            f"The server at {host} answered with what is not valid HTTP "
            f"({_root_message(exc)}): check the address and the server."
        )
    return f"Could not reach the server at {host}: {_root_message(exc)}."


def _not_http(exc: BaseException) -> bool:
    """A reply that came but is not HTTP the client reads (a 1 MB header, a broken status
    line), not a server that closed the connection before answering."""
    import httpx2

    return any(
        isinstance(e, httpx2.RemoteProtocolError) and "disconnected" not in str(e)
        for e in _chain(exc)
    )


def failure_kind(exc: BaseException) -> ErrorKind:
    """Why a question failed at the server, by what the server said in its structure (the
    HTTP status, the OpenAI error's `code` and `param`), never by its wording: what the local
    API answers its own caller (completion._engine_error) and the history keeps."""
    import openai

    if isinstance(exc, (openai.APIConnectionError, openai.APITimeoutError)):
        return ErrorKind.NO_MODEL  # not reached, or not in time
    if not isinstance(exc, openai.APIStatusError):
        return ErrorKind.FAILED  # a malformed stream, or a cause not known
    code, param = str(exc.code or ""), str(getattr(exc, "param", None) or "")
    if exc.status_code == 413 or code == "context_length_exceeded":
        return ErrorKind.CONTEXT
    if code.startswith("invalid_image"):
        return ErrorKind.IMAGE
    if param == "response_format" or code == "invalid_json_schema":
        return ErrorKind.SCHEMA
    if exc.status_code in (401, 403, 404, 429, 503):
        return ErrorKind.NO_MODEL  # the model cannot be asked: a refused key, none, busy
    return ErrorKind.FAILED


def _status_sentence(exc: openai.APIStatusError, host: str, model: str) -> str:
    status = exc.status_code
    said = _server_message(exc)
    if status == 401:
        return (
            f"The server at {host} refused the key (401). Check the server key "
            "(Settings > Model, or DESKLENS_SERVER_KEY)."
        )
    if status == 403:
        return f"The server at {host} does not allow this key to ask (403){said}."
    if status == 404:
        if model:
            return f"The server at {host} has no model named {model!r} (404){said}."
        return f"The server at {host} has no such API (404){said}. Check the address's path."
    if status in (429, 503):
        wait = retry_after(exc.response.headers.get("retry-after"))
        busy = "is busy" if status == 429 else "is not available right now"
        then = f"try again in {wait} s" if wait is not None else "try again in a moment"
        return f"The server at {host} {busy} ({status}): {then}."
    if status == 413:
        return f"The server at {host} refused the request as too large (413){said}."
    return f"The server at {host} answered with an error ({status}){said}."


def retry_after(value: str | None) -> int | None:
    """Seconds from a Retry-After header (a number, or an HTTP date), None if absent."""
    if not value:
        return None
    try:
        return max(0, round(float(value)))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    import time

    return max(0, round(moment.timestamp() - time.time()))


def _server_message(exc: BaseException) -> str:
    """ ": <the server's own error message>" when it gave one (short, one line)."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
    if not isinstance(message, str) or not message.strip():
        return ""
    line = " ".join(message.split()).rstrip(".")
    return ": " + (line if len(line) <= 200 else line[:199] + "…")


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 10:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _tls_failure(exc: BaseException) -> str | None:
    for item in _chain(exc):
        if isinstance(item, ssl.SSLCertVerificationError):
            return item.verify_message or "not trusted"
        if isinstance(item, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(item):
            return "not trusted"
    return None


def _root_message(exc: BaseException) -> str:
    root = _chain(exc)[-1]
    if isinstance(root, OSError):  # "[Errno 111] Connection refused" is not for the user
        from desktop.core.model_setup.hub_errors import network_reason

        reason = network_reason(exc)
        if reason == "the connection was refused":
            return "the connection was refused (is the server running, on that port?)"
        if reason != "no answer":
            return reason
        if root.strerror:
            return root.strerror.rstrip(".")
    text = " ".join(str(root).split()) or type(root).__name__
    return text[:200].rstrip(".")
