"""How `desklens ocr` prints one file's reply, whoever read it (a warm service or this process):
the text on stdout, or the error sentence on stderr, and the exit code for either."""

from __future__ import annotations

import sys

from desktop.cli import exit_codes
from desktop.cli.common import CliError, fail
from desktop.core.ocr.service import OcrReply

EXIT_CODES = {
    "ok": exit_codes.OK,
    "input": exit_codes.INPUT_PROBLEM,
    "model": exit_codes.MODEL_PROBLEM,
    "failed": exit_codes.FAILED,
}


def print_reply(reply: OcrReply, name: str = "", fmt: str = "text") -> int:
    if reply.status != "ok":
        return fail(CliError(reply.error, EXIT_CODES.get(reply.status, exit_codes.FAILED)))
    sys.stdout.write(reply.output + "\n")
    if not reply.output.strip():  # an empty line alone reads like a failure
        what = "no table found" if fmt == "csv" else "no text found"
        print(f"desklens: {what} in {name or 'the file'}", file=sys.stderr)
    return exit_codes.OK
