"""`desklens serve`: keep the OCR engine warm, so that `desklens ocr FILE` answers at once.

It runs in the foreground until Ctrl+C, SIGTERM, SIGHUP or --idle-exit: nothing is left running
behind the user's back. The open desktop app offers the same service while it runs.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

from desktop.cli import exit_codes
from desktop.cli.api_serve import add_api_options, api_usage_error, start_api
from desktop.cli.common import CliError, add_threads_option, fail, threads_error

if TYPE_CHECKING:
    from desktop.core.ocr.service import OcrReply, OcrRequest, OcrService


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="keep the OCR engine warm for fast `desklens ocr FILE`",
        description="Keep the OCR engine loaded and warm, so that `desklens ocr FILE` in "
        "any terminal, script or hotkey prints the text without starting its own engine "
        "(the open DeskLens window does the same while it runs). Runs in the foreground "
        "until Ctrl+C.",
    )
    add_threads_option(parser)
    parser.add_argument(
        "--idle-exit",
        type=float,
        default=None,
        metavar="MINUTES",
        help="stop after this many minutes without a request",
    )
    add_api_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if (error := threads_error(args) or api_usage_error(args)) is not None:
        return fail(error)
    if args.idle_exit is not None and args.idle_exit <= 0:
        return fail(CliError("--idle-exit must be a positive number of minutes", exit_codes.USAGE))
    from desktop.core.ocr.batch import read_one
    from desktop.core.ocr.engine import OcrEngine
    from desktop.core.ocr.model_files import OcrModelError
    from desktop.core.ocr.service import OcrService, ServiceError

    engine = OcrEngine(threads=args.threads)
    _say("warming up the OCR engine…")
    try:
        engine.warm_up(every_width=True)
    except OcrModelError as exc:
        return fail(CliError(str(exc), exit_codes.MODEL_PROBLEM))
    service = OcrService(partial(read_one, engine), on_request=_log)
    try:
        service.start()
    except ServiceError as exc:
        return fail(CliError(str(exc), exit_codes.FAILED))
    try:
        api = start_api(args, engine, _say) if args.api else None
    except CliError as exc:
        service.stop()
        return fail(exc)
    try:
        with _stopped_by_signals() as stop:
            # Said once the signals are ours: a SIGTERM right after "ready" stops cleanly.
            _say("ready: `desklens ocr FILE` now reads here. Ctrl+C stops the service.")
            reason = _wait(service, stop, args.idle_exit)
    except KeyboardInterrupt:
        reason = "interrupted"
    finally:
        if api is not None:
            api.stop()
        service.stop()
    return _stopped(service, reason)


@contextmanager
def _stopped_by_signals() -> Iterator[threading.Event]:
    """SIGTERM, and SIGHUP (the terminal closed, a service manager's reload), set the event:
    the service stops as asked, streams end with their [DONE], ocr.sock and ocr.key go."""
    stop = threading.Event()
    numbers = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    previous = {number: signal.signal(number, lambda *_: stop.set()) for number in numbers}
    try:
        yield stop
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _stopped(service: OcrService, reason: str) -> int:
    if service.failure is not None:  # the listening thread died: not a normal stop
        return fail(CliError(f"{service.failure} (`desklens serve` ended)", exit_codes.FAILED))
    _say(f"stopped ({reason}).")
    return exit_codes.OK


def _wait(service: OcrService, stop: threading.Event, idle_minutes: float | None) -> str:
    """Blocks until a stop is asked for or the service has been idle long enough."""
    while not stop.wait(1.0):
        if not service.running:
            return "the service thread ended"
        idle = time.monotonic() - service.last_request_at
        if idle_minutes is not None and idle >= idle_minutes * 60:
            return f"no request for {idle_minutes:g} min"
    return "terminated"


def _log(request: OcrRequest, reply: OcrReply) -> None:
    outcome = "read" if reply.status == "ok" else f"failed ({reply.error})"
    _say(f"{outcome}: {request.path} in {reply.seconds:.2f} s")


def _say(line: str) -> None:
    print(f"desklens serve: {line}", file=sys.stderr, flush=True)
