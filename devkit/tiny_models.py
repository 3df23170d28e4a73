"""Helpers around the tiny test model: the converter run as users run it, and the engine
settings under which answers are exact."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# f32 compute and KV cache: the CPU defaults (bf16 where the CPU has it, u8 KV cache) are
# deliberate approximations for speed that round differently from one feeding order to another,
# and the exactness tests compare token ids.
EXACT = dict(inference_precision="f32", language_properties={"KV_CACHE_PRECISION": "f32"})


def run_convert(*args: str, env: dict | None = None, timeout: int = 600):
    """Runs the real convert.py CLI in a subprocess."""
    return subprocess.run(
        [sys.executable, str(ROOT / "convert.py"), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )
