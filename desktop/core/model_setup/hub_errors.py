"""huggingface_hub and requests exceptions -> one sentence the user can act on."""

from __future__ import annotations

import errno

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
)
DISK_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def _chain(exc: BaseException):
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


def explain(exc: BaseException, *, repo: str, endpoint: str, where: str) -> FetchFailed | None:
    """The sentence for a failed listing or download, or None if `exc` is not one we know."""
    import requests
    from huggingface_hub import errors as hf

    kept = "What was downloaded so far is kept: Download again to continue."
    if isinstance(exc, hf.OfflineModeIsEnabled):
        return FetchFailed(
            "Downloading is switched off on this computer (HF_HUB_OFFLINE is set): unset it "
            f"to download {repo}."
        )
    if isinstance(exc, hf.GatedRepoError):
        return FetchFailed(
            f"{repo} is gated: accept its terms on the Hugging Face website, log in with "
            "`hf auth login` (or set HF_TOKEN) and Download again."
        )
    if isinstance(exc, hf.RepositoryNotFoundError):
        return FetchFailed(
            f"{repo} was not found on {endpoint}: check the name (owner/name); a private "
            "repository needs a token (`hf auth login` or HF_TOKEN)."
        )
    if isinstance(exc, hf.RevisionNotFoundError):
        return FetchFailed(f"{repo} has no such revision on {endpoint}.")
    for link in _chain(exc):
        if isinstance(link, OSError) and link.errno in DISK_FULL:
            return FetchFailed(
                f"The disk holding {where} is full. Free some space and Download again: what "
                "was downloaded so far is kept."
            )
    # LocalEntryNotFoundError is how hf_hub_download reports an unreachable server.
    if isinstance(exc, (hf.LocalEntryNotFoundError, requests.ConnectionError, requests.Timeout)):
        return FetchFailed(
            f"Could not reach {endpoint} ({network_reason(exc)}): check the network connection "
            f"or proxy settings. {kept}"
        )
    if isinstance(exc, hf.EntryNotFoundError):
        return FetchFailed(
            f"A file that {repo} lists is missing on {endpoint}; try again later. {kept}"
        )
    if isinstance(exc, hf.HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else "an error"
        if status == 404:
            return FetchFailed(f"{repo} was not found on {endpoint} (404): check the name.")
        return FetchFailed(f"{endpoint} answered {status}; try again later. {kept}")
    if isinstance(exc, PermissionError):
        return FetchFailed(
            f"Cannot write to {where} ({exc.strerror or exc}): choose a writable models folder."
        )
    if isinstance(exc, OSError):
        return FetchFailed(f"Cannot store the download in {where}: {exc.strerror or exc}. {kept}")
    if isinstance(exc, ValueError):  # huggingface_hub's HFValidationError: a malformed id
        return FetchFailed(f"{repo} is not a Hugging Face model id (owner/name).", exit_code=2)
    return None
