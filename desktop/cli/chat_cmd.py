"""`desklens chat IMAGE...`: a multi-turn conversation in the terminal.

Ctrl+C stops the current answer (the partial answer stays in the conversation); Ctrl+D quits.
/image PATH attaches an image to the next question, /clear starts over, /quit leaves.
"""

from __future__ import annotations

import argparse
import sys

from desktop.cli import exit_codes
from desktop.cli.common import (
    CliError,
    add_generation_options,
    add_model_options,
    ctrl_c_stops,
    fail,
    generation_overrides,
    load_engine,
    load_images,
)
from desktop.core.chat import Conversation, GenerationSettings

HELP = "Commands: /image PATH (attach), /clear (new conversation), /quit. Ctrl+D quits."


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="interactive multi-turn chat in the terminal",
        description="Chat about images in the terminal. " + HELP,
    )
    parser.add_argument("images", nargs="*", metavar="IMAGE", help="images for the first question")
    add_model_options(parser)
    add_generation_options(parser)
    parser.set_defaults(run=run)


def _read(prompt: str) -> str | None:
    try:
        return input(prompt)
    except EOFError:
        return None


def run(args: argparse.Namespace) -> int:
    try:
        pending = load_images(args.images)
        engine = load_engine(args)
    except CliError as exc:
        return fail(exc)
    settings = GenerationSettings(**generation_overrides(args))
    conversation = Conversation()
    interactive = sys.stdin.isatty()
    print(f"DeskLens chat with {engine.info.name}. {HELP}", file=sys.stderr)
    while True:
        try:
            line = _read("you> " if interactive else "")
        except KeyboardInterrupt:  # Ctrl+C at the prompt only clears the line
            print(file=sys.stderr)
            continue
        if line is None or line.strip() == "/quit":
            return exit_codes.OK
        line = line.strip()
        if not line:
            continue
        if line == "/clear":
            conversation.clear()
            engine.reset()
            pending = []
            print("(new conversation)", file=sys.stderr)
            continue
        if line.startswith("/image"):
            try:
                pending += load_images(line.split(maxsplit=1)[1:])
            except CliError as exc:
                fail(exc)
            print(f"({len(pending)} image(s) attached)", file=sys.stderr)
            continue
        sys.stdout.write("desklens> ")
        with ctrl_c_stops(engine):
            answer = engine.ask(conversation, line, pending, settings, on_text=_write)
        pending = []
        if answer.error:
            print(f"\n(error: {answer.error})", file=sys.stderr)
            continue
        suffix = " [stopped]" if answer.finish_reason == "stopped" else ""
        sys.stdout.write(suffix + "\n")
        sys.stdout.flush()
        for note in conversation.notes:
            print(f"({note})", file=sys.stderr)
        conversation.notes.clear()


def _write(chunk: str) -> None:
    sys.stdout.write(chunk)
    sys.stdout.flush()
