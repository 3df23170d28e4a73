"""The `--smoke` convention of every bench (tests/bench/test_bench_smoke.py): seconds on the
smallest inputs, the same code path, the table printed and bench/RESULTS.md never written; the
model benches take the tests' tiny model instead of the 2B shape."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

CACHE = Path.home() / ".cache" / "desklens-bench"  # the 2B-shape random model, built once


def model_bench_parser(doc: str) -> argparse.ArgumentParser:
    """A model bench's command line: its description, --cache, --write and the smoke options
    (the bench adds its own)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=CACHE, help="where the 2B model is built")
    parser.add_argument("--write", action="store_true", help="into bench/RESULTS.md")
    add_smoke_options(parser, model=True)
    return parser


def add_smoke_options(parser: argparse.ArgumentParser, *, model: bool = False) -> None:
    """`--smoke`; with `model`, the converted model and its checkpoint it runs on."""
    parser.add_argument("--smoke", action="store_true", help="seconds, smallest inputs (CI)")
    if model:
        parser.add_argument("--smoke-model", type=Path, help="converted tiny model (with --smoke)")
        parser.add_argument("--smoke-checkpoint", type=Path, help="its checkpoint (with --smoke)")


def check_smoke(args: argparse.Namespace) -> None:
    """A smoke run never writes RESULTS.md."""
    if getattr(args, "smoke", False) and getattr(args, "write", False):
        raise SystemExit("--smoke figures are not results: drop --write")


def models(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    prepare: Callable[[Path, bool], tuple[Path, Path]],
) -> tuple[Path, Path]:
    """(checkpoint, converted model): the smoke ones, or those `prepare(cache, quick)` builds."""
    if args.smoke:
        if not (args.smoke_model and args.smoke_checkpoint):
            parser.error("--smoke needs --smoke-model and --smoke-checkpoint")
        return args.smoke_checkpoint, args.smoke_model
    args.cache.mkdir(parents=True, exist_ok=True)
    return prepare(args.cache, getattr(args, "quick", False))
