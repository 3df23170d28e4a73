"""The OCR's check pages on a stand-in for a laptop CPU without VNNI: Haswell, through QEMU.

    python bench/ocr_qemu_check.py            # every check page under qemu-x86_64 -cpu Haswell
    python bench/ocr_qemu_check.py --write    # into bench/RESULTS.md
    python bench/ocr_qemu_check.py --smoke    # one page, natively (CI: the script and its table)
    python bench/ocr_qemu_check.py --data-dir ~/haswell --pages "small print"   # a page a run

`ONEDNN_MAX_CPU_ISA` caps oneDNN only, and on an AVX-512 CPU the plugin then disagrees with
itself (issue 56: a segfault, or no kernel for MaxPool). QEMU's user-mode emulation
(Debian's `qemu-user`) runs the unchanged venv on a CPU with Haswell's instructions — AVX2 and
FMA, no VNNI, no AVX-512 — which OpenVINO names "Intel Core Processor (Haswell)": the INT8
kernels that sum pairs of products in 16 bits, as on 8th-10th gen Core and AMD Zen 2/3
laptops. QEMU 7.2 has no AVX-VNNI, so Alder Lake-class laptops cannot be stood in for.

The child is devkit/ocr_isa_check.py, the one the test of every level runs, in a fresh data
folder: the INT8 check runs as at a user's first OCR on that CPU. Per page: FP32 against the
text drawn, the default engine against FP32 (the guarantee), INT8 as it is against FP32.
Emulation is slow (minutes per page), so CI runs only the smoke; the figures come from here.
On 2 cores the INT8 check alone (every check page in FP32 and INT8) took over an hour of
emulation (stop 65), so a run may be split: `--data-dir DIR` keeps the emulated CPU's data
folder, and later runs with `--pages` reuse its verdict and compiled models.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from results import publish  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options, check_smoke  # noqa: E402

HEADING = "## OCR check pages on a stand-in laptop CPU (QEMU Haswell)"
QEMU = ["qemu-x86_64", "-cpu", "Haswell"]
SMOKE_PAGE = "small print"


def run(pages: str | None, emulated: bool, kept: Path | None = None) -> tuple[dict, float]:
    """The child's JSON and its minutes; a fresh data folder, so the INT8 check runs (`kept`:
    that folder instead, whose verdict and compiled models a later run reuses)."""
    command = [sys.executable, "-m", "devkit.ocr_isa_check"]
    command += ["--pages", pages] if pages else []
    env = {k: v for k, v in os.environ.items() if k != "ONEDNN_MAX_CPU_ISA"}
    with tempfile.TemporaryDirectory() as fresh:
        data = str(kept) if kept is not None else fresh
        if emulated:
            env["DESKLENS_DATA_DIR"] = data
            env.pop("DESKLENS_OCR_VERDICTS", None)  # not a verdict another CPU reached
        started = time.monotonic()
        done = subprocess.run(
            (QEMU if emulated else []) + command,
            cwd=ROOT, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(
            f"the check pages child failed ({done.returncode}):\n{done.stderr[-3000:]}"
        )
    return json.loads(done.stdout), (time.monotonic() - started) / 60


def table(result: dict) -> list[str]:
    lines = [
        "| page | FP32 reads the text drawn | the default engine reads as FP32 "
        "| INT8 as it is reads as FP32 |",
        "|---|---|---|---|",
    ]
    for name, page in result["pages"].items():
        drawn = "–" if page["expected"] is None else _yes(page["fp32"] == page["expected"])
        lines.append(
            f"| {name} | {drawn} | {_yes(page['auto'] == page['fp32'])} "
            f"| {_yes(page['int8'] == page['fp32'])} |"
        )
    return lines


def _yes(same: bool) -> str:
    return "yes" if same else "**no**"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", help="comma-separated page names (default: every page)")
    parser.add_argument("--write", action="store_true", help="write into bench/RESULTS.md")
    parser.add_argument(
        "--data-dir", type=Path,
        help="keep the emulated CPU's data folder here: its INT8 verdict and compiled models are "
        "reused by the next run, so the pages can be read a few per run (--pages)",
    )  # fmt: skip
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    emulated = not args.smoke
    if emulated and shutil.which(QEMU[0]) is None:
        raise SystemExit("qemu-x86_64 is missing: sudo apt-get install qemu-user")
    if args.data_dir is not None:
        args.data_dir.mkdir(parents=True, exist_ok=True)
    result, minutes = run(SMOKE_PAGE if args.smoke else args.pages, emulated, args.data_dir)
    where = " ".join(QEMU) if emulated else "natively (--smoke)"
    lines = [
        HEADING,
        "",
        f"`python bench/ocr_qemu_check.py {' '.join(sys.argv[1:])}`".replace(" `", "`"),
        "",
        f"Run {where}; OpenVINO's CPU: {result['device']}; {minutes:.1f} min in all. "
        f"The INT8 check on it: {result['verdict']['sentence']}",
        "",
        *table(result),
        "",
    ]
    publish(HEADING, "\n".join(lines), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
