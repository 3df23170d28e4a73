"""huggingface_hub and requests exceptions -> one sentence the user can act on."""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from desktop.core.model_setup.errors import FetchFailed

_NETWORK_REASONS = (
    ("Connection refused", "the connection was refused"),
    ("Name or service not known", "the host name is unknown"),
    ("nodename nor servname", "the host name is unknown"),
    ("getaddrinfo failed", "the host name is unknown"),
    ("timed out", "it timed out"),
    ("Network is unreachable", "the network is unreachable"),
    ("Connection reset", "the connection was reset"),
    ("Connection aborted", "the connection was cut"),
    ("Connection broken", "the connection was cut"),
)
DISK_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def network_reason(exc: BaseException) -> str:
    text = " ".join(str(e) for e in _chain(exc))
    for needle, reason in _NETWORK_REASONS:
        if needle in text:
            return reason
    return "no answer"


KEPT = "What was downloaded so far is kept: Download again to continue."


@dataclass(frozen=True)
class _Failure:
    """What a sentence may name: the exception, the repository, the server and the folder."""

    exc: BaseException
    repo: str
    endpoint: str
    where: str

    @property
    def detail(self) -> object:  # an OSError's own words, else the exception itself
        return getattr(self.exc, "strerror", None) or self.exc


_Rule = tuple[Callable[[BaseException], bool], Callable[[_Failure], FetchFailed]]


def explain(exc: BaseException, *, repo: str, endpoint: str, where: str) -> FetchFailed | None:
    """The sentence for a failed listing or download, or None if `exc` is not one we know."""
    failure = _Failure(exc, repo, endpoint, where)
    for matches, sentence in _rules():
        if matches(exc):
            return sentence(failure)
    return None


def _rules() -> list[_Rule]:
    """(does it match, its sentence), checked in order: the first that matches explains."""
    import requests
    from huggingface_hub import errors as hf

    def kind(*types: type[BaseException]) -> Callable[[BaseException], bool]:
        return lambda exc: isinstance(exc, types)

    # LocalEntryNotFoundError is how hf_hub_download reports an unreachable server.
    unreachable = kind(
        hf.LocalEntryNotFoundError,
        requests.ConnectionError,
        requests.Timeout,
        requests.exceptions.ChunkedEncodingError,  # cut off mid-file (an IOError too)
    )
    return [
        (kind(hf.OfflineModeIsEnabled), _offline),
        (kind(hf.GatedRepoError), _gated),
        (kind(hf.RepositoryNotFoundError), _repo_not_found),
        (
            kind(hf.RevisionNotFoundError),
            lambda f: FetchFailed(f"{f.repo} has no such revision on {f.endpoint}."),
        ),
        (_disk_full, _no_space),
        (kind(requests.exceptions.InvalidJSONError), _not_the_hub),  # an OSError too: first
        (_header_too_long, _not_http),  # reached: a ConnectionError only by its wrapping
        (unreachable, _unreachable),
        (kind(hf.EntryNotFoundError), _file_missing),
        (kind(hf.HfHubHTTPError), _http_status),
        (kind(PermissionError), _not_writable),
        (
            kind(OSError),
            lambda f: FetchFailed(f"Cannot store the download in {f.where}: {f.detail}. {KEPT}"),
        ),
        (kind(ValueError), _not_a_model_id),  # huggingface_hub's HFValidationError
    ]


def _disk_full(exc: BaseException) -> bool:
    return any(isinstance(link, OSError) and link.errno in DISK_FULL for link in _chain(exc))


def _header_too_long(exc: BaseException) -> bool:
    # http.client's LineTooLong (a header line over 64 KiB), wrapped by urllib3 and requests.
    return any("LineTooLong" in f"{type(e).__name__} {e!r}" for e in _chain(exc))


def _not_http(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"{failure.endpoint} answered with what is not valid HTTP (a header line too long to "
        "read): check the hub's address (HF_ENDPOINT) or the proxy. " + KEPT
    )


def _offline(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        "Downloading is switched off on this computer (HF_HUB_OFFLINE is set): unset it "
        f"to download {failure.repo}."
    )


def _gated(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"{failure.repo} is gated: accept its terms on the Hugging Face website, log in with "
        "`hf auth login` (or set HF_TOKEN) and Download again."
    )


def _repo_not_found(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"{failure.repo} was not found on {failure.endpoint}: check the name (owner/name); a "
        "private repository needs a token (`hf auth login` or HF_TOKEN)."
    )


def _no_space(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"The disk holding {failure.where} is full. Free some space and Download again: what "
        "was downloaded so far is kept."
    )


def _unreachable(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"Could not reach {failure.endpoint} ({network_reason(failure.exc)}): check the network "
        f"connection or proxy settings. {KEPT}"
    )


def _not_the_hub(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"{failure.endpoint} answered, but not as a model hub does (an empty or non-JSON reply, "
        "such as a redirect that names no destination): check the hub's address (HF_ENDPOINT) "
        "or the proxy, and try again."
    )


def _file_missing(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"A file that {failure.repo} lists is missing on {failure.endpoint}; try again later. "
        f"{KEPT}"
    )


def _http_status(failure: _Failure) -> FetchFailed:
    response = getattr(failure.exc, "response", None)
    status = response.status_code if response is not None else "an error"
    if status == 404:
        return FetchFailed(
            f"{failure.repo} was not found on {failure.endpoint} (404): check the name."
        )
    return FetchFailed(f"{failure.endpoint} answered {status}; try again later. {KEPT}")


def _not_writable(failure: _Failure) -> FetchFailed:
    return FetchFailed(
        f"Cannot write to {failure.where} ({failure.detail}): choose a writable models folder."
    )


def _not_a_model_id(failure: _Failure) -> FetchFailed:
    return FetchFailed(f"{failure.repo} is not a Hugging Face model id (owner/name).", exit_code=2)
