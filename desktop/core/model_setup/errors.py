"""The two ways getting a model fails, so callers can tell the user what to do next."""

from __future__ import annotations


class SetupError(Exception):
    """A problem the user can act on; str() is one sentence. `exit_code` is convert.py's."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class ModelRejected(SetupError):
    """The files arrived but are not a model DeskLens can run (checksum, inputs, validation)."""


class FetchFailed(SetupError):
    """The files could not be fetched or stored (network, unknown repo, full or read-only disk).
    Whatever was downloaded so far is kept for the next try."""
