"""`desklens models`: the converted models DeskLens can see, with their manifest facts."""

from __future__ import annotations

import argparse
import json

from desktop.cli import exit_codes
from desktop.core import paths
from desktop.core.model_registry import find_models


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "models", help="list converted models", description="List converted models."
    )
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    entries = find_models()
    if args.json:
        rows = [
            {
                "name": e.name,
                "folder": str(e.folder),
                "weight_format": e.manifest.weight_format if e.manifest else None,
                "source": e.manifest.source if e.manifest else None,
                "created": e.manifest.created if e.manifest else None,
                "size_bytes": e.size_bytes,
                "versions": e.manifest.versions if e.manifest else {},
                "problem": e.problem,
            }
            for e in entries
        ]
        print(json.dumps(rows, indent=2))
        return exit_codes.OK
    if not entries:
        where = ", ".join(str(p) for p in paths.model_search_dirs())
        print(f"No converted models in {where}.")
        print("Convert one: python convert.py --model Qwen/Qwen3-VL-2B-Instruct")
        return exit_codes.OK
    for e in entries:
        if e.manifest is None:
            print(f"{e.name}\n  {e.folder}\n  unusable: {e.problem}")
            continue
        m = e.manifest
        ov_version = m.versions.get("openvino", "?")
        print(
            f"{e.name}\n  {e.folder}\n  {m.weight_format}, {e.size_bytes / 2**20:.0f} MiB, "
            f"from {m.source}, {m.created}, OpenVINO {ov_version}"
            + (" (imported)" if m.imported else "")
        )
    return exit_codes.OK
