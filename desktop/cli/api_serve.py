"""`desklens serve --api`: the local OpenAI-compatible API next to the warm OCR service.

The model is loaded once and owned by one thread (`EngineThread`), which answers the API's
chat requests in order; the OCR requests use the serve process's own warm OCR engine.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.cli import exit_codes
from desktop.cli.common import CliError, add_model_options, load_engine

if TYPE_CHECKING:
    from desktop.core.api.jobs import EngineThread
    from desktop.core.api.server import ApiServer
    from desktop.core.ocr import OcrEngine


OWNER_STOP_S = 3.0  # SIGTERM ends `serve --api` within seconds, whatever the engine is doing


def add_api_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("local API")
    group.add_argument(
        "--api",
        action="store_true",
        help="also serve an OpenAI-compatible API on 127.0.0.1 and ::1 (token in the data "
        "folder's api.token)",
    )
    group.add_argument("--port", type=int, default=None, help="the API's port (default 8765)")
    group.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web origin allowed to call the API from a browser (CORS), e.g. "
        "http://localhost:3000; none by default",
    )
    add_model_options(parser, threads=False)


def api_usage_error(args: argparse.Namespace) -> CliError | None:
    if not args.api and (args.port is not None or args.allow_origin):
        return CliError("--port and --allow-origin go with --api", exit_codes.USAGE)
    if args.api and args.idle_exit is not None:  # it counts the OCR socket's requests only
        return CliError("--idle-exit does not go with --api", exit_codes.USAGE)
    if args.port is not None and not 1 <= args.port <= 65535:
        return CliError("--port must be from 1 to 65535", exit_codes.USAGE)
    return None


@dataclass
class RunningApi:
    server: ApiServer
    owner: EngineThread

    def stop(self) -> None:
        self.server.stop()  # refuses what waits, answers what runs with a 503
        # The answer under way ends at its next token; a step that has none (a long prefill)
        # is not waited for: the owner is a daemon thread, and the process ends without it.
        self.owner.stop(OWNER_STOP_S)


def start_api(args: argparse.Namespace, ocr: OcrEngine, say: Callable[[str], None]) -> RunningApi:
    """Loads the model and starts the server; CliError (exit 3 model, 1 port) otherwise."""
    from desktop.core.api.jobs import EngineThread, JobQueue
    from desktop.core.api.routes import ApiBackend
    from desktop.core.api.server import DEFAULT_PORT, ApiServer, ApiSettings, ApiStartError
    from desktop.core.api.tokens import load_or_create_token, token_path

    say("loading the model for the API…")
    engine = load_engine(args)
    settings = ApiSettings(
        port=DEFAULT_PORT if args.port is None else args.port,
        allowed_origins=tuple(args.allow_origin),
    )
    queue = JobQueue(settings.max_waiting)
    owner = EngineThread(engine, queue)
    backend = ApiBackend(queue, lambda: engine.info.name, lambda: ocr)
    try:
        token = load_or_create_token()
        server = ApiServer(backend, token, settings)
        server.start()
    except (ApiStartError, OSError) as exc:
        raise CliError(str(exc), exit_codes.FAILED) from exc
    owner.start()
    say(f"API ready at {server.url} (model {engine.info.name!r}); token in {token_path()}")
    return RunningApi(server, owner)
