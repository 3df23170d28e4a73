"""What convert.py prints, line by line, for the app's first-run panel to follow it: the
one definition both sides use."""

from __future__ import annotations

STEP_PREFIX = "[convert] "  # a step of the conversion, shown as the panel's status
DONE_PREFIX = f"{STEP_PREFIX}Done in "  # the last step: "[convert] Done in 42 s: FOLDER"
ERROR_PREFIX = "convert.py: error: "  # what went wrong, as a sentence for the user


def step_line(step: str) -> str:
    return f"{STEP_PREFIX}{step}"


def error_line(sentence: str) -> str:
    return f"{ERROR_PREFIX}{sentence}"
