"""Process exit codes shared by every `desklens` subcommand (defined in the core, where the
self-test uses them too)."""

from desktop.core.exit_codes import (
    FAILED,
    INPUT_PROBLEM,
    INTERRUPTED,
    MODEL_PROBLEM,
    OK,
    PIPE_CLOSED,
    TERMINATED,
    USAGE,
)

__all__ = ["FAILED", "INPUT_PROBLEM", "INTERRUPTED", "MODEL_PROBLEM", "OK", "PIPE_CLOSED",
           "TERMINATED", "USAGE"]  # fmt: skip
