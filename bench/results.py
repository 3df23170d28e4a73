"""bench/RESULTS.md: each benchmark owns one `## ` section and rewrites only that one."""

from __future__ import annotations

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
