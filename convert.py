#!/usr/bin/env python3
"""Convert a Hugging Face Qwen3-VL checkpoint to OpenVINO IR for DeskLens, or import a converted IR.

    python convert.py --model Qwen/Qwen3-VL-2B-Instruct            # INT8 weights (default)
    python convert.py --model ./my-checkpoint --weight-format int4
    python convert.py --model ./Qwen3-VL-2B-Instruct-int8-ov        # import a converted IR folder

This file is the export half (it needs the `convert` extra: pip install -e ".[convert]"). What
follows an export - checks, manifest, validation with the engine, the move into place from a
hidden staging folder - is desktop.core.model_setup, shared with `desklens models --download`
and `--import` and the app: Ctrl+C or a crash never leaves a half model where the app looks.
"""

from __future__ import annotations

import argparse
import os
import shutil  # noqa: F401  (tests replace shutil.disk_usage through this module)
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from desktop.core.manifest import EXPORT_PACKAGES, RUNTIME_PACKAGES, installed_versions
from desktop.core.model_setup import checks
from desktop.core.model_setup.convert_output import ERROR_PREFIX, error_line, step_line
from desktop.core.model_setup.errors import SetupError
from desktop.core.model_setup.install import (
    default_models_dir,
    finish_ir_folder,
    import_folder,
    prepare_target,
)
from desktop.core.model_setup.staging import (
    OLD_PREFIX,  # noqa: F401  (re-exported: the names convert.py always had)
    TMP_PREFIX,  # noqa: F401
    check_free_space,
    clean_leftovers,  # noqa: F401
    folder_size,
    staging_folder,
)

ConvertError = SetupError  # convert.py's name for a one-sentence failure with an exit code
WEIGHT_FORMATS = ("int8", "int4", "fp16", "fp32")
BYTES_PER_PARAM = {"int8": 1.0, "int4": 0.6, "fp16": 2.0, "fp32": 4.0}
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
CONVERT_EXTRA_HINT = 'pip install -e ".[convert]"'


@dataclass
class Plan:
    source: str  # hub id or local folder, as given
    local: Path | None  # local checkpoint or IR folder
    importing: bool
    weight_format: str
    target: Path
    max_pixels: int | None
    revision: str | None = None


def say(step: str) -> None:
    print(step_line(step), flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="convert.py",
        description="Convert a Hugging Face Qwen3-VL model to OpenVINO IR (INT8 weights by "
        "default) for DeskLens, or import an already converted OpenVINO folder.",
    )
    model = parser.add_argument_group("model")
    model.add_argument(
        "--model",
        required=True,
        help="Hugging Face model id (e.g. Qwen/Qwen3-VL-2B-Instruct), a local checkpoint "
        "folder, or a converted OpenVINO IR folder to import",
    )
    model.add_argument("--revision", default=None, help="hub revision (branch, tag or commit)")
    out = parser.add_argument_group("output")
    out.add_argument(
        "--output",
        type=Path,
        default=None,
        help="target folder (default: ov_models/<model-name>-<format>)",
    )
    out.add_argument("--force", action="store_true", help="replace an existing target folder")
    comp = parser.add_argument_group("compression")
    comp.add_argument(
        "--weight-format",
        choices=WEIGHT_FORMATS,
        default=None,
        help="weight precision: int8 (default), int4, fp16, or fp32 (full precision)",
    )
    img = parser.add_argument_group("images")
    img.add_argument(
        "--max-pixels",
        type=int,
        default=None,
        help="default image pixel budget written into the model's preprocessor config "
        "(one visual token is 32x32 px)",
    )
    return parser


def make_plan(args: argparse.Namespace) -> Plan:
    local = Path(args.model).expanduser()
    local = local if local.is_dir() else None
    importing = local is not None and checks.is_ir_folder(local)
    if importing and args.weight_format:
        raise ConvertError(
            "--weight-format cannot be used when importing an already converted folder: its "
            "weights are already compressed. Drop --weight-format, or pass the original "
            "Hugging Face checkpoint to --model to convert it again.",
            exit_code=2,
        )
    if args.max_pixels is not None and args.max_pixels < 32 * 32:
        raise ConvertError("--max-pixels must be at least 1024 (one 32x32 visual token).", 2)
    weight_format = args.weight_format or ("imported" if importing else "int8")
    name = (local.name if local else args.model.rstrip("/").split("/")[-1]) or "model"
    target = args.output or default_models_dir() / (
        name if importing else f"{name}-{weight_format}"
    )
    return Plan(
        args.model,
        local,
        importing,
        weight_format,
        target.absolute(),
        args.max_pixels,
        args.revision,
    )


# -- the export half -----------------------------------------------------------------------------


def require_convert_extra() -> None:
    missing = []
    for module in ("optimum.intel", "nncf", "transformers", "torch"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module.split(".")[0])
    if missing:
        raise ConvertError(
            f"Converting needs the convert extra ({', '.join(missing)} not installed). "
            f"Install it with: {CONVERT_EXTRA_HINT}   (or download the ready INT8 model with "
            "`desklens models --download`, or import a converted OpenVINO folder with "
            "--model FOLDER)."
        )


def resolve_checkpoint(plan: Plan) -> Path:
    """The local folder of the checkpoint, downloading it from the hub when given an id."""
    if plan.local is not None:
        if not (plan.local / "config.json").is_file():
            raise ConvertError(
                f"{plan.local} is neither a Hugging Face checkpoint (no config.json) nor a "
                "converted OpenVINO folder (no openvino_language_model.xml)."
            )
        return plan.local
    if "/" not in plan.source or plan.source.count("/") > 1:
        raise ConvertError(
            f"{plan.source} is not a local folder nor a Hugging Face model id (owner/name)."
        )
    say(f"Downloading {plan.source} from the Hugging Face hub ...")
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

        return Path(snapshot_download(plan.source, revision=plan.revision))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError) as exc:
        raise ConvertError(
            f"Could not download {plan.source} from the Hugging Face hub (no network, or the "
            f"hub is unreachable: {type(exc).__name__}). On an offline machine, copy the "
            "checkpoint here and pass its folder: --model /path/to/Qwen3-VL-2B-Instruct, or "
            "import a pre-converted OpenVINO folder (OpenVINO/Qwen3-VL-2B-Instruct-int8-ov) "
            "with --model /path/to/that/folder."
        ) from exc


def required_bytes(checkpoint: Path, config: dict, weight_format: str) -> int:
    """Disk the export needs: a full-precision IR in staging, then the compressed one."""
    weights = folder_size(checkpoint, (".safetensors", ".bin"))
    dtype = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16").split(".")[-1]
    params = weights / DTYPE_BYTES.get(dtype, 2)
    staging = params * 4 if weight_format in ("int8", "int4") else 0
    return int(staging + params * BYTES_PER_PARAM[weight_format]) + (64 << 20)


def quantization_config(weight_format: str) -> dict | None:
    if weight_format == "int8":
        return {"bits": 8, "sym": True, "group_size": -1, "ratio": 1.0}
    if weight_format == "int4":
        # "adjust": a smaller group where a layer is narrower than 128 channels (tiny models).
        return {
            "bits": 4,
            "sym": False,
            "group_size": 128,
            "ratio": 1.0,
            "group_size_fallback": "adjust",
        }
    return None


def export(checkpoint: Path, staging: Path, weight_format: str) -> None:
    import logging

    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

    from optimum.exporters.openvino import main_export
    from optimum.exporters.openvino.__main__ import _main_quantize
    from optimum.intel import OVConfig

    logging.getLogger("nncf").setLevel(logging.WARNING)
    # Tracing prints pages of TracerWarnings that say nothing actionable to a user.
    warnings.filterwarnings("ignore", module=r"(torch|transformers|optimum)\b.*")
    warnings.filterwarnings("ignore", category=UserWarning)
    task = "image-text-to-text"
    quant = quantization_config(weight_format)
    ov_config = OVConfig(dtype=weight_format) if quant is None else OVConfig(dtype="fp32")
    say("Exporting to OpenVINO IR (full precision) ...")
    main_export(
        model_name_or_path=str(checkpoint),
        output=staging,
        task=task,
        ov_config=ov_config,
        convert_tokenizer=True,
        library_name="transformers",
    )
    if quant is not None:
        say(f"Compressing weights to {weight_format.upper()} (NNCF) ...")
        _main_quantize(
            model_name_or_path=str(checkpoint),
            task=task,
            library_name="transformers",
            quantization_config=quant,
            output=staging,
            cache_dir=None,
        )


def convert(plan: Plan, force: bool) -> Path:
    """Exports the checkpoint into staging, then hands it to the shared finishing steps."""
    prepare_target(plan.target, force, say)
    require_convert_extra()
    checkpoint = resolve_checkpoint(plan)
    config = checks.check_model_type(checkpoint)
    check_free_space(
        plan.target.parent,
        required_bytes(checkpoint, config, plan.weight_format),
        "the conversion",
        "Free some space or pass --output on a larger disk.",
    )
    versions = installed_versions(EXPORT_PACKAGES)
    with staging_folder(plan.target) as staging:
        export(checkpoint, staging, plan.weight_format)
        versions.update(installed_versions(RUNTIME_PACKAGES))
        finish_ir_folder(
            staging,
            plan.target,
            source=plan.source,
            imported=False,
            versions=versions,
            weight_format=plan.weight_format,
            max_pixels=plan.max_pixels,
            force=force,
            say=say,
        )
    return plan.target


def run(plan: Plan, force: bool) -> Path:
    if plan.importing:
        assert plan.local is not None
        import_folder(plan.local, plan.target, force=force, max_pixels=plan.max_pixels, say=say)
        return plan.target
    return convert(plan, force)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        plan = make_plan(args)
        target = run(plan, args.force)
    except SetupError as exc:
        print(error_line(str(exc)), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("convert.py: interrupted; nothing was written to the target.", file=sys.stderr)
        return 130
    except OSError as exc:  # a read-only or full output folder: a sentence, not a traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(
            f"{ERROR_PREFIX}{exc.strerror or exc}{where}. Choose a writable output "
            "folder with free space (--output).",
            file=sys.stderr,
        )
        return 1
    say(f"Done in {time.perf_counter() - started:.0f} s: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
