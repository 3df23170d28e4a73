"""`desklens models`: list the converted models; `--download [REPO]` fetches the ready INT8
model from the Hugging Face hub, `--import FOLDER` takes an already converted folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from desktop.cli import exit_codes
from desktop.cli.common import CliError, add_allow_http_option, fail
from desktop.cli.setup_progress import MODES, Reporter
from desktop.core import paths
from desktop.core.model_registry import find_models
from desktop.core.model_setup.download import DEFAULT_REPO  # no network library imported yet
from desktop.core.terminal_text import terminal_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "models",
        help="list, download or import models",
        description="List converted models, download the ready INT8 model, or import a "
        "converted OpenVINO folder. Exit codes: 0 ok, 2 usage, 3 the files are not a usable "
        "model, 4 they could not be fetched or stored (network, name, disk), 130 interrupted "
        "(a download resumes where it stopped when run again).",
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument(
        "--download",
        nargs="?",
        const=DEFAULT_REPO,
        metavar="REPO",
        help=f"download a converted OpenVINO model from the Hugging Face hub (default "
        f"{DEFAULT_REPO}; HF_ENDPOINT selects a mirror)",
    )
    action.add_argument(
        "--import", dest="import_dir", type=Path, metavar="FOLDER",
        help="import an already converted OpenVINO folder",
    )  # fmt: skip
    parser.add_argument("--revision", help="hub revision to download (branch, tag or commit)")
    parser.add_argument("--name", help="folder name for the new model (default: the repo's)")
    parser.add_argument(
        "--models-dir", type=Path, help="where to put it (default: the DeskLens models folder)"
    )
    parser.add_argument("--force", action="store_true", help="replace a model of that name")
    parser.add_argument(
        "--progress", choices=MODES, default="auto",
        help="bar (terminal), lines (logs) or json (one event per line); auto picks",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="machine-readable list")
    parser.add_argument(
        "--server",
        metavar="URL",
        help="list the models of an OpenAI-compatible model server instead (key from "
        "$DESKLENS_SERVER_KEY or the one saved in Settings)",
    )
    add_allow_http_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.server and (args.download or args.import_dir):
        return fail(CliError("--server lists a server's models; it does not install", 2))
    if args.server:
        return list_server_models(args.server, args.json, args.allow_http)
    if args.download or args.import_dir:
        return set_up(args)
    return list_models(args.json)


def list_server_models(url: str, as_json: bool, insecure: bool) -> int:
    from desktop.core.remote.config import from_environment
    from desktop.core.remote.engine import list_models as server_models
    from desktop.core.remote.errors import RemoteError

    try:
        config = from_environment(url, paths.user_data_dir(), insecure=insecure)
        assert config is not None  # a URL was given
        names = server_models(config)
    except RemoteError as exc:
        return fail(CliError(str(exc), exit_codes.FAILED))
    if as_json:
        print(json.dumps({"server": config.url, "models": names}, indent=2))
    elif names:
        print(f"Models on the server at {terminal_text(config.host, lines=False)}:")
        print("\n".join(f"  {terminal_text(name, lines=False)}" for name in names))
    else:
        print(f"The server at {terminal_text(config.host, lines=False)} offers no model.")
    return exit_codes.OK


def set_up(args: argparse.Namespace) -> int:
    from desktop.core.model_setup.download import download_model
    from desktop.core.model_setup.errors import ModelRejected, SetupError
    from desktop.core.model_setup.install import default_models_dir, import_folder

    reporter = Reporter(args.progress)
    models_dir = (args.models_dir or default_models_dir()).absolute()
    try:
        if args.download:
            installed = download_model(
                args.download,
                models_dir,
                name=args.name,
                revision=args.revision,
                force=args.force,
                on_progress=reporter.progress,
                say=reporter.say,
            )
        else:
            source = args.import_dir.expanduser().absolute()
            if not source.is_dir():
                reporter.failed(f"{source} is not a folder.", exit_codes.INPUT_PROBLEM)
                return exit_codes.INPUT_PROBLEM
            target = models_dir / (args.name or source.name)
            installed = import_folder(source, target, force=args.force, say=reporter.say)
    except KeyboardInterrupt:
        resumable = " Run the same command again to continue." if args.download else ""
        reporter.failed(f"Interrupted; no model was installed.{resumable}", 130)
        return exit_codes.INTERRUPTED
    except SetupError as exc:
        code = exit_codes.MODEL_PROBLEM if isinstance(exc, ModelRejected) else (
            exit_codes.USAGE if exc.exit_code == 2 else exit_codes.INPUT_PROBLEM
        )  # fmt: skip
        reporter.failed(str(exc), code)
        return code
    except OSError as exc:  # e.g. a read-only models folder
        where = f" ({exc.filename})" if exc.filename else ""
        reporter.failed(
            f"{exc.strerror or exc}{where}: choose a writable models folder with free space.",
            exit_codes.INPUT_PROBLEM,
        )
        return exit_codes.INPUT_PROBLEM
    reporter.done(
        str(installed.folder),
        f"Ready: {installed.folder} ({installed.weight_format}). Use it with "
        f"`desklens --model {installed.folder.name}` or pick it in the app's settings.",
    )
    return exit_codes.OK


def list_models(as_json: bool) -> int:
    entries = find_models()
    if as_json:
        rows = [
            {
                "name": e.name,
                "folder": str(e.folder),
                "weight_format": e.manifest.weight_format if e.manifest else None,
                "source": e.manifest.source if e.manifest else None,
                "created": e.manifest.created if e.manifest else None,
                "size_bytes": e.size_bytes,
                "versions": e.manifest.versions if e.manifest else {},
                "problem": e.problem,
            }
            for e in entries
        ]
        print(json.dumps(rows, indent=2))
        return exit_codes.OK
    if not entries:
        where = ", ".join(str(p) for p in paths.model_search_dirs())
        print(f"No converted models in {where}.")
        print(f"Download the ready INT8 model: desklens models --download   ({DEFAULT_REPO})")
        return exit_codes.OK
    for e in entries:
        if e.manifest is None:
            print(f"{e.name}\n  {e.folder}\n  unusable: {e.problem}")
            continue
        m = e.manifest
        ov_version = m.versions.get("openvino", "?")
        print(
            f"{e.name}\n  {e.folder}\n  {m.weight_format}, {e.size_bytes / 2**20:.0f} MiB, "
            f"from {m.source}, {m.created}, OpenVINO {ov_version}"
            + (" (imported)" if m.imported else "")
        )
    return exit_codes.OK
