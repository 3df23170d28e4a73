"""Every benchmark script still starts: each runs as written in bench/RESULTS.md, with `--smoke`
(the smallest inputs; the model benches on the tests' tiny model), and prints its table.

A move or rename that breaks a bench fails here. Only that the bench ran and printed its table
is asserted, never a timing: the figures come from the full runs by hand.

The `--smoke` convention, for every script in bench/ that has a `main`: seconds rather than
minutes, the same code path as the full run, the table printed, bench/RESULTS.md never written.
Model benches take the converted model as `--smoke-model DIR` and, where they compare with
PyTorch, the checkpoint as `--smoke-checkpoint DIR`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

# script -> (extra arguments, needs the tiny model). Every bench script with a command line is
# here: test_every_bench_with_a_command_line_is_listed keeps the list whole.
BENCHES: dict[str, tuple[list[str], bool]] = {
    "vlm_bench.py": ([], True),
    "app_soak.py": ([], True),
    "ahead_bench.py": (["--no-torch"], True),  # its torch child is vlm_bench.py's, smoked there
    "decode_bench.py": ([], True),
    "precision_bench.py": ([], True),
    "send_write_bench.py": ([], True),
    "prune_bench.py": ([], True),
    "prune_fp32_check.py": ([], True),
    "api_bench.py": ([], True),
    "remote_bench.py": ([], True),
    "grounding_bench.py": ([], True),
    "draft_bench.py": (["--costs", "bench/verify_costs.json"], False),
    "ocr_bench.py": ([], False),
    "ocr_cli_bench.py": ([], False),
    "ocr_speed_ab.py": ([], False),
    "ocr_profile.py": ([], False),
    "ocr_rec_batches.py": ([], False),
    "ocr_isa_bench.py": ([], False),
    "ocr_qemu_check.py": ([], False),
    "ocr_cascade.py": ([], False),
    "ocr_baseline.py": ([], False),
    "codes_bench.py": ([], False),
    "unreadable_bench.py": ([], False),
    "documents_out_bench.py": ([], False),
    "table_bench.py": ([], False),
    "small_text_bench.py": ([], False),
}

# A Markdown table: a header row, then its |---| separator.
TABLE = re.compile(r"^\|.*\|\s*\n\|[\s:|-]*-{3,}[\s:|-]*\|\s*$", re.MULTILINE)


def test_every_bench_with_a_command_line_is_listed():
    scripts = {p.name for p in BENCH.glob("*.py") if "__main__" in p.read_text(encoding="utf-8")}
    assert scripts == set(BENCHES), "bench scripts and BENCHES differ: add the new one here"


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(BENCHES))
def test_bench_starts_and_prints_its_table(script, request, tmp_path):
    extra, needs_model = BENCHES[script]
    args = [sys.executable, str(BENCH / script), "--smoke", *extra]
    if needs_model:
        args += ["--smoke-model", str(request.getfixturevalue("tiny_ir"))]
        args += ["--smoke-checkpoint", str(request.getfixturevalue("tiny_checkpoint"))]
    before = (BENCH / "RESULTS.md").read_bytes()
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1"}
    result = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert TABLE.search(result.stdout), f"{script} printed no table:\n{output[-4000:]}"
    assert (BENCH / "RESULTS.md").read_bytes() == before, f"{script} --smoke wrote RESULTS.md"
