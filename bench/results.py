"""bench/RESULTS.md: each benchmark owns one `## ` section and rewrites only that one."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def write_section(heading: str, body: str, path: Path = RESULTS) -> None:
    """Replaces the section whose heading starts with `heading` (appends it if missing)."""
    text = path.read_text(encoding="utf-8") if path.is_file() else "# Benchmark results\n\n"
    pattern = re.compile(rf"^{re.escape(heading)}.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    body = body.rstrip("\n") + "\n"
    if pattern.search(text):
        text = pattern.sub(lambda _: body + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + body
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def publish(heading: str, text: str, write: bool) -> None:
    """Prints a benchmark's section; with `write`, also puts it into RESULTS.md."""
    print(text)
    if write:
        write_section(heading, text)


def add_smoke_options(parser: argparse.ArgumentParser, *, model: bool = False) -> None:
    """`--smoke`: seconds on the smallest inputs, the same code path, the table printed and
    RESULTS.md never written (tests/bench/test_bench_smoke.py runs every bench so). Model
    benches take the converted model (and the checkpoint, where PyTorch is compared) from it."""
    parser.add_argument("--smoke", action="store_true", help="seconds, smallest inputs (CI)")
    if model:
        parser.add_argument("--smoke-model", type=Path, help="converted model for --smoke")
        parser.add_argument("--smoke-checkpoint", type=Path, help="its checkpoint, for --smoke")


def check_smoke(args: argparse.Namespace) -> None:
    """A smoke run never writes RESULTS.md."""
    if getattr(args, "smoke", False) and getattr(args, "write", False):
        raise SystemExit("--smoke figures are not results: drop --write")
