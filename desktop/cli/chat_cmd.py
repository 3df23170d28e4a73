"""`desklens chat IMAGE...`: a multi-turn conversation in the terminal.

Ctrl+C stops the current answer (the partial answer stays in the conversation); Ctrl+D quits.
/image PATH attaches an image to the next question, /clear starts over, /quit leaves.
Attached images are read (encoded and prefilled) while the question is being typed.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

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
from desktop.core.chat import Conversation, GenerationSettings, ImageLike

if TYPE_CHECKING:
    from desktop.core.engine import VLMEngine
    from desktop.core.images import LoadedImage

HELP = "Commands: /image PATH (attach), /clear (new conversation), /quit. Ctrl+D quits."


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="interactive multi-turn chat in the terminal",
        description="Chat about images in the terminal. " + HELP,
    )
    parser.add_argument("images", nargs="*", metavar="IMAGE", help="images for the first question")
    add_model_options(parser)
    add_generation_options(parser)
    parser.set_defaults(run=run)


class ReadAhead:
    """Runs `VLMEngine.prepare` for the next question's images in a background thread while the
    prompt waits for the user; `finish` (before anything else uses the engine) cancels what is
    left of it and waits for the step under way (the vision call cannot be cut)."""

    def __init__(self, engine: VLMEngine) -> None:
        self._engine = engine
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()

    def start(
        self, conversation: Conversation, images: Sequence[ImageLike], settings: GenerationSettings
    ) -> None:
        self.finish()
        if not images:
            return
        self._cancel = threading.Event()
        self._thread = threading.Thread(
            target=self._engine.prepare,
            args=(conversation, list(images), settings, self._cancel),
            name="desklens-read-ahead",
        )
        self._thread.start()

    def finish(self) -> None:
        if self._thread is not None:
            self._cancel.set()
            self._thread.join()
            self._thread = None


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
    ahead = ReadAhead(engine)
    ahead.start(conversation, pending, settings)
    try:
        return _loop(engine, conversation, pending, settings, ahead, interactive)
    finally:
        ahead.finish()


def _loop(
    engine: VLMEngine,
    conversation: Conversation,
    pending: list[LoadedImage],
    settings: GenerationSettings,
    ahead: ReadAhead,
    interactive: bool,
) -> int:
    while True:
        try:
            line = _read("you> " if interactive else "")
        except KeyboardInterrupt:  # Ctrl+C at the prompt only clears the line
            print(file=sys.stderr)
            continue
        if line is None or line.strip() == "/quit":
            return exit_codes.OK
        line = line.strip()
        if line:
            ahead.finish()  # whatever comes next uses the engine
            pending = _run_line(line, engine, conversation, pending, settings, ahead)


def _run_line(
    line: str,
    engine: VLMEngine,
    conversation: Conversation,
    pending: list[LoadedImage],
    settings: GenerationSettings,
    ahead: ReadAhead,
) -> list[LoadedImage]:
    """Runs a command or answers a question; returns the images attached to the next one."""
    if line == "/clear":
        conversation.clear()
        engine.reset()
        print("(new conversation)", file=sys.stderr)
        return []
    if line.startswith("/image"):
        try:
            pending += load_images(line.split(maxsplit=1)[1:])
        except CliError as exc:
            fail(exc)
        print(f"({len(pending)} image(s) attached)", file=sys.stderr)
        ahead.start(conversation, pending, settings)
        return pending
    _answer(engine, conversation, line, pending, settings)
    return []


def _answer(
    engine: VLMEngine,
    conversation: Conversation,
    question: str,
    images: list[LoadedImage],
    settings: GenerationSettings,
) -> None:
    """Streams the answer to stdout, then the conversation's notes (dropped turns) to stderr."""
    sys.stdout.write("desklens> ")
    with ctrl_c_stops(engine):
        answer = engine.ask(conversation, question, images, settings, on_text=_write)
    if answer.error:
        print(f"\n(error: {answer.error})", file=sys.stderr)
        return
    suffix = " [stopped]" if answer.finish_reason == "stopped" else ""
    sys.stdout.write(suffix + "\n")
    sys.stdout.flush()
    for note in conversation.notes:
        print(f"({note})", file=sys.stderr)
    conversation.notes.clear()


def _write(chunk: str) -> None:
    sys.stdout.write(chunk)
    sys.stdout.flush()
