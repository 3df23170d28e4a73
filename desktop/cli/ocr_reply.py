"""How `desklens ocr` prints one file's reply, whoever read it (a warm service or this process):
the text on stdout, or the error sentence on stderr, and the exit code for either."""

from __future__ import annotations

import sys

from desktop.cli import exit_codes
from desktop.cli.common import CliError, fail
from desktop.core.ocr.formats import OutputFormat
from desktop.core.ocr.service import OcrReply
from desktop.core.terminal_text import terminal_text

EXIT_CODES = {
    "ok": exit_codes.OK,
    "input": exit_codes.INPUT_PROBLEM,
    "model": exit_codes.MODEL_PROBLEM,
    "failed": exit_codes.FAILED,
}


def print_reply(reply: OcrReply, name: str = "", fmt: OutputFormat = OutputFormat.TEXT) -> int:
    if reply.status != "ok":
        return fail(CliError(reply.error, EXIT_CODES.get(reply.status, exit_codes.FAILED)))
    # A code's payload may hold anything: on a terminal it is shown, never run.
    output = terminal_text(reply.output) if sys.stdout.isatty() else reply.output
    sys.stdout.write(output + "\n")
    if not reply.output.strip():  # an empty line alone reads like a failure
        what = "no table found" if fmt.tables_only else "no text found"
        print(f"desklens: {what} in {terminal_text(name or 'the file', lines=False)}",
              file=sys.stderr)  # fmt: skip
    return exit_codes.OK
