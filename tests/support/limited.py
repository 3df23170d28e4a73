"""Run `desklens` in a child process under an address-space limit, and report its peak RSS.

A memory regression then fails (MemoryError, a refused allocation) instead of swapping the
machine, and the measured peak can be asserted on. The child prints its peak as the last
line of stderr; `LimitedRun.stderr` has it removed.
"""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# OpenVINO and its thread pools reserve ~1.5 GB of address space before reading anything
# (VmPeak of `desklens ocr` on a small image); the rest is what one input may cost.
ADDRESS_SPACE_LIMIT = 3584 << 20
# "under ~1.5 GB beyond the loaded models" (~0.35 GB resident after the OCR warm-up), and
# the FP32 detector's activations at its 2048-px cap: the 100 MP page peaks at ~1,930 MB
# with the FP32 OCR, the default, against ~1,480 MB with INT8 (bench/RESULTS.md).
MAX_PEAK_RSS_MB = 2100

# The peak is the child's own VmHWM: ru_maxrss would keep the forked parent's (a pytest
# process that has loaded models, ~2 GB) across the exec.
_CHILD = (
    "import atexit, re, resource, sys\n"
    "def peak():\n"
    "    try:\n"
    "        status = open('/proc/self/status').read()\n"
    "        return int(re.search(r'VmHWM:\\s+(\\d+)', status).group(1))\n"
    "    except (OSError, AttributeError):\n"
    "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "atexit.register(lambda: sys.stderr.write(f'\\npeak-rss-kb={peak()}\\n'))\n"
    "from desktop.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
_PEAK = re.compile(r"\n?peak-rss-kb=(\d+)\n?$")


@dataclass(frozen=True)
class LimitedRun:
    returncode: int
    stdout: str
    stderr: str
    peak_rss_mb: float


def run_limited(
    *args: str,
    env: dict[str, str],
    limit: int = ADDRESS_SPACE_LIMIT,
    timeout: float = 600,
) -> LimitedRun:
    def apply_limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    completed = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        env={**os.environ, **env},
        cwd=ROOT,
        timeout=timeout,
        preexec_fn=apply_limit,
    )
    match = _PEAK.search(completed.stderr)
    peak = int(match.group(1)) / 1024 if match else float("nan")
    stderr = completed.stderr[: match.start()] if match else completed.stderr
    return LimitedRun(completed.returncode, completed.stdout, stderr, peak)
