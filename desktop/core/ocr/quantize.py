"""Builds the INT8 OCR models into a folder from the committed decisions (plain OpenVINO).

    python -m desktop.core.ocr.quantize --out DIR      # e.g. the installer's bundle

The decisions (`int8_ranges.json`) come from NNCF at development time:
`python -m devkit.ocr_calibrate`. Rerun that when rapidocr's models change.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop.core.ocr.int8 import RANGES_FILE
from desktop.core.ocr.model_files import build_int8_models


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ranges", type=Path, default=RANGES_FILE, help="INT8 decisions file (JSON)"
    )
    parser.add_argument("--out", type=Path, required=True, help="build the models here")
    args = parser.parse_args(argv)
    if build_int8_models(args.out, args.ranges) is None:
        print(f"could not build INT8 models into {args.out}", file=sys.stderr)
        return 1
    print(f"INT8 OCR models written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
