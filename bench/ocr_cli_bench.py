"""`desklens ocr FILE` timed as a user runs it: a one-shot process vs. a warm `desklens serve`.

Renders screenshots with the OCR benchmark's generators (full pages, and the regions people
usually capture: a few paragraphs, a dialog), then times, side by side in one run, the wall
clock of the command from start to exit:

* one-shot: `desklens ocr --no-service FILE`: a new process imports OpenVINO, compiles the
  models (from the compiled-model cache, filled by an untimed first run) and reads;
* served: `desklens ocr FILE` while `desklens serve` runs: the client hands the path to the
  warm engine and prints its text.

Both produce the same output (checked). Each figure is the median of --repeat runs; "service"
is the reading time the service itself logged.

    .venv/bin/python bench/ocr_cli_bench.py [--repeat 3] [--write]
    .venv/bin/python bench/ocr_cli_bench.py --smoke    # one screenshot, one run per mode (CI)
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ocr_bench  # bench/ is on sys.path
from PIL import Image
from results import write_section
from smoke import add_smoke_options, check_smoke

ROOT = Path(__file__).resolve().parents[1]

HEADING = "## OCR from the command line: one-shot vs `desklens serve`"
TARGET_SECONDS = 1.0


@dataclass(frozen=True)
class Row:
    label: str
    size: str
    lines: int
    one_shot: float  # median seconds of `desklens ocr --no-service`
    served: float  # median seconds of `desklens ocr` with `desklens serve` running
    service_read: float  # median seconds the service itself logged


def region(maker: Callable, box: tuple[int, int, int, int]) -> Callable:
    """A part of a generated page, as a region screenshot."""
    return lambda rng, name: maker(rng, name).image.crop(box)


SHOTS: list[tuple[str, Callable]] = [
    ("region: 3 paragraphs, 900x330", region(ocr_bench.make_plain, (0, 0, 900, 330))),
    ("region: app dialog, 700x400", region(ocr_bench.make_ui, (0, 0, 700, 400))),
    ("code editor, 900x740", lambda rng, name: ocr_bench.make_code(rng, name).image),
    ("invoice, 1000x760", lambda rng, name: ocr_bench.make_invoice(rng, name).image),
    ("app window, 1280x800", lambda rng, name: ocr_bench.make_ui(rng, name).image),
    ("full page, dense text", lambda rng, name: ocr_bench.make_plain(rng, name).image),
    ("full page, small font", lambda rng, name: ocr_bench.make_small(rng, name).image),
    ("two columns", lambda rng, name: ocr_bench.make_two_columns(rng, name).image),
]


def desklens(*args: str, env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "desktop", *args],
        capture_output=True, encoding="utf-8", env=env, cwd=ROOT, check=True,
    )  # fmt: skip
    return time.perf_counter() - started, done.stdout


class Service:
    """`desklens serve` in the background, its log lines collected."""

    def __init__(self, env: dict[str, str]) -> None:
        self.log: list[str] = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "desktop", "serve"],
            stderr=subprocess.PIPE, encoding="utf-8", env=env, cwd=ROOT,
        )  # fmt: skip
        threading.Thread(target=self._collect, daemon=True).start()
        while not any("ready" in line for line in self.log):
            if self.proc.poll() is not None:
                raise SystemExit("desklens serve did not start:\n" + "".join(self.log))
            time.sleep(0.1)

    def _collect(self) -> None:
        assert self.proc.stderr is not None
        self.log.extend(self.proc.stderr)

    def seconds_for(self, path: Path) -> list[float]:
        pattern = re.compile(rf"read: {re.escape(str(path))} in ([0-9.]+) s")
        return [float(m.group(1)) for line in self.log if (m := pattern.search(line))]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per image and mode")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    if args.smoke:
        args.repeat = 1
    shots = SHOTS[:1] if args.smoke else SHOTS

    rng = random.Random(args.seed)
    rows = []
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        env = {**os.environ, "DESKLENS_DATA_DIR": str(folder / "data")}
        paths = []
        for index, (label, make) in enumerate(shots):
            path = folder / f"shot{index}.png"
            make(rng, label).save(path)
            paths.append((label, path))
        desklens("ocr", str(paths[0][1]), env=env)  # builds the INT8 models, fills the cache
        one_shot = {
            path: [desklens("ocr", "--no-service", str(path), env=env) for _ in range(args.repeat)]
            for _, path in paths
        }
        service = Service(env)
        try:
            served = {
                path: [desklens("ocr", str(path), env=env) for _ in range(args.repeat)]
                for _, path in paths
            }
        finally:
            service.stop()
        for label, path in paths:
            texts = {text for _, text in one_shot[path] + served[path]}
            assert len(texts) == 1, f"{label}: served and one-shot outputs differ"
            with Image.open(path) as image:
                size = "x".join(map(str, image.size))
            rows.append(
                Row(
                    label,
                    size,
                    len(texts.pop().splitlines()),
                    statistics.median(t for t, _ in one_shot[path]),
                    statistics.median(t for t, _ in served[path]),
                    statistics.median(service.seconds_for(path)),
                )
            )
    section = report(rows, args)
    print(section)
    if args.write:
        write_section(HEADING, section)


def report(rows: list[Row], args: argparse.Namespace) -> str:
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPU cores"
    lines = [
        HEADING,
        "",
        f"Command: `{' '.join(['python bench/ocr_cli_bench.py', *sys.argv[1:]])}`",
        "",
        f"Machine: {machine}. Wall clock of the whole command (process start to exit), median "
        f"of {args.repeat} runs; INT8 OCR models; compiled-model cache warm for the one-shot "
        "runs; `desklens serve` warmed up (every recognizer line width primed) before the "
        "served runs. Output identical in both modes.",
        "",
        "| Screenshot | Size | Text lines | One-shot `desklens ocr` | Served `desklens ocr` "
        "| of which the service read | Speed-up |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.label} | {row.size} | {row.lines} | {row.one_shot:.2f} s "
            f"| **{row.served:.2f} s** | {row.service_read:.2f} s "
            f"| {row.one_shot / row.served:.1f}x |"
        )
    cold = statistics.median(row.one_shot for row in rows)
    warm = statistics.median(row.served for row in rows)
    under = sum(row.served < TARGET_SECONDS for row in rows)
    lines += [
        f"| **median** | | | {cold:.2f} s | **{warm:.2f} s** | | {cold / warm:.1f}x |",
        "",
        f"- Served: {under} of {len(rows)} screenshots under {TARGET_SECONDS:.0f} s; "
        f"client overhead (start, connect, print) "
        f"{statistics.median(row.served - row.service_read for row in rows):.2f} s.",
        f"- One-shot: {sum(row.one_shot < TARGET_SECONDS for row in rows)} of {len(rows)} under "
        f"{TARGET_SECONDS:.0f} s.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
