"""`desklens` command line: the GUI by default, headless subcommands over the same core.

Each subcommand lives in its own module exposing ``register(subparsers)``; the module is imported
only when its subcommand runs, so `desklens ocr` never pays for the VLM engine and vice versa.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from desktop import APP_NAME, __version__
from desktop.cli import exit_codes

# subcommand name -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "ask": ("desktop.cli.ask_cmd", "ask a question about images; streams the answer"),
    "chat": ("desktop.cli.chat_cmd", "interactive multi-turn chat in the terminal"),
    "models": ("desktop.cli.models_cmd", "list converted models"),
    "ocr": ("desktop.cli.ocr_cmd", "extract text from images, folders and PDFs"),
    "history": ("desktop.cli.history_cmd", "list the app's chats or export one as a document"),
    "serve": ("desktop.cli.serve_cmd", "keep the OCR engine warm for fast `desklens ocr FILE`"),
    "capture": ("desktop.cli.capture_cmd", "capture a screen region into the OCR or the chat"),
    "redact": ("desktop.cli.redact_cmd", "fill e-mails, IBANs, card and phone numbers on images"),
    "tray": ("desktop.cli.tray_cmd", "a tray icon and a global shortcut for screen captures"),
    "gui": ("desktop.cli.gui_cmd", "start the desktop app (the default)"),
}


def build_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="desklens",
        description=f"{APP_NAME}: offline answers and text extraction for images.",
    )
    parser.add_argument("--version", action="version", version=f"{APP_NAME} {__version__}")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check the runtime, OCR and (with --model) the model, then exit 0/1",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        if name == chosen:
            importlib.import_module(module_name).register(subparsers)
        else:  # listed in --help without importing its heavy dependencies
            subparsers.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--self-test" in argv:
        from desktop.selftest import main as self_test

        return self_test([a for a in argv if a != "--self-test"])
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["gui", *argv]
    elif argv[0] not in SUBCOMMANDS and os.path.exists(argv[0]):
        argv = ["gui", *argv]  # `desklens shot.png`: open the app with it attached
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return exit_codes.USAGE
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return exit_codes.INTERRUPTED
    except BrokenPipeError:
        from desktop.cli.common import stdout_closed

        return stdout_closed()


if __name__ == "__main__":
    sys.exit(main())
