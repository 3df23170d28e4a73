"""Pieces every model-using subcommand shares: model options, loading, image inputs, errors."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from desktop.cli import exit_codes
from desktop.core.remote.config import ENV_KEY, ENV_URL
from desktop.core.terminal_text import terminal_text

if TYPE_CHECKING:  # the imaging stack loads only where images are (fast `desklens ocr`)
    from desktop.core.conversation.engine_protocol import AnswerEngine
    from desktop.core.engine import VLMEngine
    from desktop.core.images import LoadedImage
    from desktop.core.ocr import OcrEngine
    from desktop.core.ocr.models import OcrResult
    from desktop.core.remote.config import ServerConfig


class CliError(Exception):
    """Printed as `desklens: error: …` with its exit code, never as a traceback."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def stdout_closed() -> int:
    """stdout's reader left (`desklens history list | head -1`): nothing more is written, no
    traceback, exit 141. stdout is pointed at /dev/null so that the interpreter's last flush
    does not complain either."""
    with contextlib.suppress(OSError, ValueError):
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    return exit_codes.PIPE_CLOSED


def fail(error: CliError) -> int:
    print(f"desklens: error: {terminal_text(str(error))}", file=sys.stderr)
    return error.exit_code


def add_threads_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--threads N` on a parser or argument group."""
    parser.add_argument("--threads", type=int, default=None, help="CPU inference threads")


def threads_error(args: argparse.Namespace) -> CliError | None:
    """The usage error for a --threads below 1 (the commands that check it), else None."""
    if args.threads is not None and args.threads < 1:
        return CliError("--threads must be 1 or more", exit_codes.USAGE)
    return None


def add_model_options(parser: argparse.ArgumentParser, *, threads: bool = True) -> None:
    """Model choice and device options; `threads=False` where the command has its own."""
    group = parser.add_argument_group("model")
    group.add_argument("--model", help="converted model folder or name (see `desklens models`)")
    group.add_argument("--device", default="CPU", help="OpenVINO device: CPU, GPU, NPU, AUTO")
    if threads:
        add_threads_option(group)
    group.add_argument(
        "--max-visual-tokens",
        type=int,
        default=None,
        help="image detail: visual tokens per image (32x32 px each); lower is faster",
    )
    group.add_argument(
        "--no-skip-repeats",
        action="store_true",
        help="read every 32x32 block of an image, also those that repeat a neighbour pixel "
        "for pixel (skipped by default: same pixels, a fraction of the time on screenshots)",
    )


def add_generation_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("generation")
    group.add_argument("--max-new-tokens", type=int, default=None, help="answer length limit")
    group.add_argument("--temperature", type=float, default=None, help="0 = greedy (default)")
    group.add_argument("--repetition-penalty", type=float, default=None)
    group.add_argument(
        "--ignore-eos",
        action="store_true",
        help="keep generating until --max-new-tokens (benchmarks, tests)",
    )


def generation_overrides(args: argparse.Namespace) -> dict:
    """The generation options the user actually gave (None = keep the default/preset value)."""
    given = {
        "max_new_tokens": args.max_new_tokens,
        "temperature": args.temperature,
        "repetition_penalty": args.repetition_penalty,
        "ignore_eos": args.ignore_eos or None,
    }
    return {key: value for key, value in given.items() if value is not None}


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """A model server instead of this computer's model (the OCR stays here)."""
    group = parser.add_argument_group("model server")
    where = group.add_mutually_exclusive_group()
    where.add_argument(
        "--server",
        metavar="URL",
        help="ask an OpenAI-compatible model server instead of this computer's model, e.g. "
        "http://10.0.0.5:8000/v3 (OpenVINO Model Server) or another DeskLens's "
        f"`serve --api`; also ${ENV_URL}. The key comes from ${ENV_KEY} or the one saved in "
        "Settings. Your questions and images go to that server.",
    )
    where.add_argument(
        "--local", action="store_true", help=f"use this computer's model even if ${ENV_URL} is set"
    )
    group.add_argument(
        "--server-model", metavar="NAME", help="the server's model (default: its only or first)"
    )
    add_allow_http_option(group)


def add_allow_http_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    parser.add_argument(
        "--allow-http",
        action="store_true",
        help="allow plain http:// to a server that is not on this computer or a private "
        "network (your images and key then cross the network unencrypted)",
    )


def server_config(args: argparse.Namespace) -> ServerConfig | None:
    """The server this command asks, or None for this computer's model."""
    from desktop.core import paths
    from desktop.core.remote.config import from_environment
    from desktop.core.remote.errors import RemoteError

    if getattr(args, "local", False):
        return None
    try:
        return from_environment(
            getattr(args, "server", None),
            paths.user_data_dir(),
            getattr(args, "server_model", None),
            insecure=getattr(args, "allow_http", False),
        )
    except RemoteError as exc:
        raise CliError(str(exc), exit_codes.USAGE) from exc


def load_answer_engine(args: argparse.Namespace) -> AnswerEngine:
    """A server's model when one is asked for (said on stderr: the images leave this
    computer), else this computer's model."""
    config = server_config(args)
    if config is None:
        return load_engine(args)
    from desktop.core.remote.engine import RemoteEngine
    from desktop.core.remote.errors import RemoteError

    try:
        engine = RemoteEngine.connect(config)
    except RemoteError as exc:
        raise CliError(f"{exc}{local_model_hint()}", exit_codes.FAILED) from exc
    print(
        f"desklens: asking {engine.info.name!r} on the server at {config.host}: your questions "
        "and images go there (the OCR stays on this computer).",
        file=sys.stderr,
    )
    return engine


def local_model_hint() -> str:
    """ " Without --server, this computer's model NAME answers." when there is one."""
    from desktop.core.model_registry import find_models

    try:
        models = find_models()
    except OSError:
        return ""
    usable = [entry for entry in models if entry.manifest is not None]
    return f" Without --server, this computer's model {usable[0].name!r} answers." if usable else ""


def load_engine(args: argparse.Namespace) -> VLMEngine:
    """Resolves and loads the model; model problems become exit code 3."""
    from desktop.core.engine import EngineConfig, VLMEngine
    from desktop.core.manifest import ModelError
    from desktop.core.model_registry import resolve_model

    config = EngineConfig(device=args.device, threads=args.threads)
    if args.max_visual_tokens:
        config.max_visual_tokens = args.max_visual_tokens
    config.skip_repeats = not args.no_skip_repeats
    try:
        return VLMEngine.load(resolve_model(args.model), config)
    except ModelError as exc:
        raise CliError(str(exc), exit_codes.MODEL_PROBLEM) from exc


def load_images(paths: Sequence[str]) -> list[LoadedImage]:
    """Files and folders to images; anything unreadable is an input problem (exit code 4)."""
    from desktop.core.images import ImageError, collect_image_files, load_image

    files, refused = collect_image_files(paths)
    if refused:
        names = ", ".join(p.name for p in refused)
        raise CliError(f"not an image DeskLens can read: {names}", exit_codes.INPUT_PROBLEM)
    if not files and paths:
        raise CliError(f"no images found in {', '.join(paths)}", exit_codes.INPUT_PROBLEM)
    try:
        return [load_image(path) for path in files]
    except ImageError as exc:
        raise CliError(str(exc), exit_codes.INPUT_PROBLEM) from exc


def read_images(images: Sequence[LoadedImage], threads: int | None = None) -> list[OcrResult]:
    """The fast OCR of each image (for --ground and for drafting the answer)."""
    from desktop.core.ocr.model_files import OcrModelError

    try:
        ocr = _ocr_engine(threads)
        return [ocr.extract(image) for image in images]
    except OcrModelError as exc:
        raise CliError(str(exc), exit_codes.MODEL_PROBLEM) from exc


_kept: dict[int | None, OcrEngine] | None = None  # within `ocr_kept`: its engine by threads


@contextmanager
def ocr_kept() -> Iterator[None]:
    """Within it `read_images` uses one OCR engine, kept until the end: `desklens ask`'s checks
    and drafts share its compiled models, and none is dropped while the model answers (after the
    first OCR on a CPU had dropped the INT8 check's engines, a Ctrl+C in the answer crashed
    OpenVINO, SIGSEGV in TBB's affinity code, 3 of 3 on an AMX Xeon; with the engine kept, 0
    of 3)."""
    global _kept
    _kept = {}
    try:
        yield
    finally:
        _kept = None


def _ocr_engine(threads: int | None) -> OcrEngine:
    from desktop.core.ocr import OcrEngine

    if _kept is None:
        return OcrEngine(threads=threads)
    if threads not in _kept:
        _kept[threads] = OcrEngine(threads=threads)
    return _kept[threads]


def add_drafting_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ocr-drafts",
        choices=("auto", "on", "off"),
        default="auto",
        help="draft the answer from the fast-OCR text of the images: faster decoding of text "
        "the answer copies, never a different answer (auto: for the text, markdown and json "
        "presets and with --ground)",
    )


def drafting_hints(
    args: argparse.Namespace,
    images: Sequence[LoadedImage],
    results: Sequence[OcrResult] | None = None,
) -> list[str]:
    """Hints for VLMEngine.ask by --ocr-drafts: from `results` if the OCR already ran, else it
    runs here when asked for; an OCR that cannot run only costs the speed-up."""
    from desktop.core.refine import COPYING_PRESETS, draft_hints

    preset = getattr(args, "preset", None)
    wanted = args.ocr_drafts == "on" or (
        args.ocr_drafts == "auto" and (preset in COPYING_PRESETS or results is not None)
    )
    if not wanted or not images:
        return []
    if results is None:
        try:
            results = read_images(images, getattr(args, "threads", None))
        except (CliError, RuntimeError, ValueError):
            return []
    return draft_hints(results)


@contextmanager
def ctrl_c_stops(engine: AnswerEngine) -> Iterator[None]:
    """While answering, Ctrl+C stops the answer (cooperatively) instead of killing the process."""
    if not hasattr(signal, "SIGINT") or not _main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda *_: engine.stop())
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def page_progress() -> Callable[[int, int], None] | None:
    """A PDF's "page 3 of 10" on stderr, rewritten in place, when stderr is a terminal."""
    return _show_page if sys.stderr.isatty() else None


def _show_page(done: int, total: int) -> None:
    end = "\n" if done == total else ""
    print(f"\rpage {done} of {total}", end=end, file=sys.stderr, flush=True)
