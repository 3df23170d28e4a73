"""The `--smoke` convention of the model benches (tests/bench/test_bench_smoke.py): the tests'
tiny model instead of the 2B shape, seconds instead of minutes, bench/RESULTS.md never written."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def add_smoke_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--smoke", action="store_true", help="tiny model, seconds, no write")
    parser.add_argument("--smoke-model", type=Path, help="converted tiny model (with --smoke)")
    parser.add_argument("--smoke-checkpoint", type=Path, help="its checkpoint (with --smoke)")


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
