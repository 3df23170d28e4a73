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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.cli import exit_codes
from desktop.cli.common import (
    CliError,
    add_generation_options,
    add_model_options,
    add_server_options,
    ctrl_c_stops,
    fail,
    generation_overrides,
    load_answer_engine,
    load_images,
)
from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService, FollowUp, PrepareRequest
from desktop.core.terminal_text import terminal_text

if TYPE_CHECKING:
    from desktop.core.conversation.engine_protocol import AnswerEngine
    from desktop.core.images import LoadedImage

HELP = "Commands: /image PATH (attach), /clear (new conversation), /quit. Ctrl+D quits."


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "chat",
        help="interactive multi-turn chat in the terminal",
        description="Chat about images in the terminal. " + HELP,
    )
    parser.add_argument("images", nargs="*", metavar="IMAGE", help="images for the first question")
    add_model_options(parser)
    add_server_options(parser)
    add_generation_options(parser)
    parser.set_defaults(run=run)


class ReadAhead:
    """Runs the service's `prepare` for the next question's images in a background thread while
    the prompt waits for the user; `finish` (before anything else uses the engine) cancels what
    is left of it and waits for the step under way (the vision call cannot be cut)."""

    def __init__(self, service: ConversationService) -> None:
        self._service = service
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()

    def start(self, images: Sequence[LoadedImage], settings: GenerationSettings) -> None:
        self.finish()
        if not images:
            return
        self._cancel = threading.Event()
        request = PrepareRequest(tuple(images), settings, follow_up=True)
        self._thread = threading.Thread(
            target=self._service.prepare, args=(request, self._cancel), name="desklens-read-ahead"
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
        engine = load_answer_engine(args)
    except CliError as exc:
        return fail(exc)
    settings = GenerationSettings(**generation_overrides(args))
    service = ConversationService(engine)
    interactive = sys.stdin.isatty()
    print(f"DeskLens chat with {engine.info.name}. {HELP}", file=sys.stderr)
    ahead = ReadAhead(service)
    ahead.start(pending, settings)
    try:
        return _loop(Chat(service, engine, settings, ahead), pending, interactive)
    finally:
        ahead.finish()


@dataclass(frozen=True)
class Chat:
    """What the loop works with: the conversation (the service's unsaved follow-up one)."""

    service: ConversationService
    engine: AnswerEngine  # for Ctrl+C's stop
    settings: GenerationSettings
    ahead: ReadAhead


def _loop(chat: Chat, pending: list[LoadedImage], interactive: bool) -> int:
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
            chat.ahead.finish()  # whatever comes next uses the engine
            pending = _run_line(line, chat, pending)


def _run_line(line: str, chat: Chat, pending: list[LoadedImage]) -> list[LoadedImage]:
    """Runs a command or answers a question; returns the images attached to the next one."""
    if line == "/clear":
        chat.service.reset()
        print("(new conversation)", file=sys.stderr)
        return []
    if line.startswith("/image"):
        try:
            pending += load_images(line.split(maxsplit=1)[1:])
        except CliError as exc:
            fail(exc)
        print(f"({len(pending)} image(s) attached)", file=sys.stderr)
        chat.ahead.start(pending, chat.settings)
        return pending
    _answer(chat, line, pending)
    return []


def _answer(chat: Chat, question: str, images: list[LoadedImage]) -> None:
    """Streams the answer to stdout, then the conversation's notes (dropped turns) to stderr."""
    sys.stdout.write("desklens> ")
    request = AskRequest(question, tuple(images), chat.settings, FollowUp())
    with ctrl_c_stops(chat.engine):
        result = chat.service.ask(request, on_text=_write)
    answer = result.answer
    if answer.error:
        print(f"\n(error: {terminal_text(answer.error)})", file=sys.stderr)
        return
    suffix = " [stopped]" if answer.finish_reason == "stopped" else ""
    sys.stdout.write(suffix + "\n")
    sys.stdout.flush()
    for note in result.notes:
        print(f"({terminal_text(note)})", file=sys.stderr)


def _write(chunk: str) -> None:
    sys.stdout.write(terminal_text(chunk))
    sys.stdout.flush()
