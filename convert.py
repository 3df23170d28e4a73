#!/usr/bin/env python3
"""Convert a Hugging Face Qwen3-VL checkpoint to OpenVINO IR for DeskLens, or import a converted IR.

    python convert.py --model Qwen/Qwen3-VL-2B-Instruct            # INT8 weights (default)
    python convert.py --model ./my-checkpoint --weight-format int4
    python convert.py --model ./Qwen3-VL-2B-Instruct-int8-ov        # import a converted IR folder

Exports into a hidden temporary folder beside the target, validates it (loads it with DeskLens's
engine and generates a few tokens for a generated image), writes the manifest, and only then
moves it into place: Ctrl+C or a crash never leaves a half model where the app looks.
Needs the `convert` extra for exporting (pip install -e ".[convert]"); importing needs only the app.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from desktop.core import paths
from desktop.core.manifest import (
    EXPORT_PACKAGES,
    MANIFEST_NAME,
    REQUIRED_FILES,
    RUNTIME_PACKAGES,
    SUPPORTED_MODEL_TYPES,
    ModelError,
    build_manifest,
    installed_versions,
    write_manifest,
)

WEIGHT_FORMATS = ("int8", "int4", "fp16", "fp32")
TMP_PREFIX = ".desklens-tmp-"
OLD_PREFIX = ".desklens-old-"
BYTES_PER_PARAM = {"int8": 1.0, "int4": 0.6, "fp16": 2.0, "fp32": 4.0}
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
CONVERT_EXTRA_HINT = 'pip install -e ".[convert]"'


class ConvertError(Exception):
    """A problem the user can act on; printed as one message, exit code 1 (or as given)."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Plan:
    source: str  # hub id or local folder, as given
    local: Path | None  # local checkpoint or IR folder
    importing: bool
    weight_format: str
    target: Path
    max_pixels: int | None


def say(step: str) -> None:
    print(f"[convert] {step}", flush=True)


# -- argument parsing ----------------------------------------------------------------------------


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


def default_models_dir() -> Path:
    return paths.source_tree_models_dir() or paths.user_data_dir() / "models"


def is_ir_folder(folder: Path) -> bool:
    return (folder / "openvino_language_model.xml").is_file()


def make_plan(args: argparse.Namespace) -> Plan:
    local = Path(args.model).expanduser()
    local = local if local.is_dir() else None
    importing = local is not None and is_ir_folder(local)
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
    return Plan(args.model, local, importing, weight_format, target.absolute(), args.max_pixels)


# -- temporary folders ---------------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clean_leftovers(parent: Path) -> list[Path]:
    """Removes temporary folders left by a converter that was killed (its pid is gone)."""
    removed = []
    if not parent.is_dir():
        return removed
    for entry in parent.iterdir():
        if not entry.is_dir() or not entry.name.startswith((TMP_PREFIX, OLD_PREFIX)):
            continue
        pid_text = entry.name.rsplit("-", 1)[-1]
        if pid_text.isdigit() and _pid_alive(int(pid_text)) and int(pid_text) != os.getpid():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


@contextlib.contextmanager
def staging_folder(target: Path):
    """A hidden folder beside the target, removed unless the caller moved it into place."""
    staging = target.parent / f"{TMP_PREFIX}{target.name}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def move_into_place(staging: Path, target: Path, force: bool) -> None:
    old = None
    if target.exists():
        if not force:
            raise ConvertError(f"{target} already exists. Pass --force to replace it.", 2)
        old = target.parent / f"{OLD_PREFIX}{target.name}-{os.getpid()}"
        target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        if old is not None:
            old.rename(target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# -- checks --------------------------------------------------------------------------------------


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
            f"Install it with: {CONVERT_EXTRA_HINT}   (or import a pre-converted OpenVINO "
            "folder, e.g. OpenVINO/Qwen3-VL-2B-Instruct-int8-ov, with --model FOLDER)."
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

        return Path(snapshot_download(plan.source))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError) as exc:
        raise ConvertError(
            f"Could not download {plan.source} from the Hugging Face hub (no network, or the "
            f"hub is unreachable: {type(exc).__name__}). On an offline machine, copy the "
            "checkpoint here and pass its folder: --model /path/to/Qwen3-VL-2B-Instruct, or "
            "import a pre-converted OpenVINO folder (OpenVINO/Qwen3-VL-2B-Instruct-int8-ov) "
            "with --model /path/to/that/folder."
        ) from exc


def check_model_type(folder: Path) -> dict:
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise ConvertError(f"Cannot read {folder / 'config.json'}: {exc}") from exc
    model_type = config.get("model_type")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise ConvertError(
            f"{folder} holds a '{model_type}' model, which DeskLens cannot run. "
            f"Supported model types: {', '.join(SUPPORTED_MODEL_TYPES)} "
            "(e.g. Qwen/Qwen3-VL-2B-Instruct)."
        )
    return config


def folder_size(folder: Path, suffixes: tuple[str, ...] | None = None) -> int:
    return sum(
        p.stat().st_size
        for p in folder.rglob("*")
        if p.is_file() and (suffixes is None or p.suffix in suffixes)
    )


def required_bytes(checkpoint: Path, config: dict, weight_format: str) -> int:
    """Disk the export needs: a full-precision IR in staging, then the compressed one."""
    weights = folder_size(checkpoint, (".safetensors", ".bin"))
    dtype = str(config.get("torch_dtype") or config.get("dtype") or "bfloat16").split(".")[-1]
    params = weights / DTYPE_BYTES.get(dtype, 2)
    staging = params * 4 if weight_format in ("int8", "int4") else 0
    return int(staging + params * BYTES_PER_PARAM[weight_format]) + (64 << 20)


def check_free_space(where: Path, needed: int) -> None:
    probe = where
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < needed:
        raise ConvertError(
            f"Not enough free disk space in {probe}: the conversion needs about "
            f"{needed / 2**30:.1f} GiB and {free / 2**30:.1f} GiB is free. Free some space or "
            "pass --output on a larger disk."
        )


def check_ir_files(folder: Path) -> None:
    """Refuses an IR folder with a missing or truncated file, naming the file."""
    import openvino as ov
    import openvino_tokenizers  # noqa: F401  (tokenizer IR needs its ops registered)

    for name in REQUIRED_FILES:
        if not (folder / name).is_file():
            raise ConvertError(f"{folder} is incomplete: {name} is missing.")
    core = ov.Core()
    for xml in sorted(folder.glob("openvino_*.xml")):
        try:
            core.read_model(xml)
        except Exception as exc:  # the reader reports truncation as a generic RuntimeError
            raise ConvertError(
                f"{xml.with_suffix('.bin').name} (or {xml.name}) in {folder} is damaged or "
                "truncated: OpenVINO cannot read it. Copy or download it again."
            ) from exc
    for name in ("config.json", "preprocessor_config.json"):
        try:
            json.loads((folder / name).read_text())
        except ValueError as exc:
            raise ConvertError(f"{name} in {folder} is damaged: {exc}") from exc


def detect_weight_format(folder: Path) -> str:
    """Precision of the language model's weights, read from its IR constants."""
    import openvino as ov

    model = ov.Core().read_model(folder / "openvino_language_model.xml")
    seen = {
        op.get_element_type().get_type_name()
        for op in model.get_ops()
        if op.get_type_name() == "Constant"
    }
    for types, name in ((("u4", "i4"), "int4"), (("i8", "u8"), "int8"), (("f16",), "fp16")):
        if seen.intersection(types):
            return name
    return "fp32"


def exporter_versions(folder: Path) -> dict[str, str]:
    """Versions recorded by optimum-intel inside the IR (for imported folders)."""
    import openvino as ov

    model = ov.Core().read_model(folder / "openvino_language_model.xml")
    versions = {}
    keys = {
        "optimum_intel_version": "optimum-intel",
        "transformers_version": "transformers",
        "nncf_version": "nncf",
        "pytorch_version": "torch",
    }
    for key, package in keys.items():
        with contextlib.suppress(Exception):
            versions[package] = model.get_rt_info(["optimum", key]).astype(str)
    with contextlib.suppress(Exception):
        runtime = model.get_rt_info(["Runtime_version"]).astype(str)
        versions["openvino"] = runtime.split("-")[0]
    return versions


# -- export --------------------------------------------------------------------------------------


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


def set_max_pixels(folder: Path, max_pixels: int) -> None:
    path = folder / "preprocessor_config.json"
    config = json.loads(path.read_text())
    size = config.setdefault("size", {})
    size["longest_edge"] = max_pixels
    if "max_pixels" in config:
        config["max_pixels"] = max_pixels
    path.write_text(json.dumps(config, indent=2) + "\n")


def validate(folder: Path) -> str:
    """Loads the folder with DeskLens's engine and generates a few tokens for a test image."""
    import hashlib

    import numpy as np
    from PIL import Image

    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import VLMEngine

    @dataclass
    class _Probe:
        image: Image.Image
        digest: str

    rng = np.random.default_rng(0)
    picture = Image.fromarray(rng.integers(0, 255, (128, 192, 3), dtype=np.uint8))
    probe = _Probe(picture, hashlib.sha256(picture.tobytes()).hexdigest())
    engine = VLMEngine.load(folder)
    answer = engine.ask(
        Conversation(), "Describe the image.", [probe], GenerationSettings(max_new_tokens=4)
    )
    if answer.error:
        raise ConvertError(f"Validation failed: {answer.error}")
    return f"{answer.stats.generated_tokens} tokens in {answer.stats.total_s:.1f} s"


def run(plan: Plan, force: bool) -> Path:
    target = plan.target
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in clean_leftovers(target.parent):
        say(f"Removed a leftover from an interrupted run: {leftover.name}")
    if target.exists() and not force:
        raise ConvertError(f"{target} already exists. Pass --force to replace it.", exit_code=2)

    if plan.importing:
        assert plan.local is not None
        say(f"Checking {plan.local} ...")
        check_ir_files(plan.local)
        check_model_type(plan.local)
        check_free_space(target.parent, folder_size(plan.local) + (16 << 20))
        versions = exporter_versions(plan.local)
    else:
        require_convert_extra()
        checkpoint = resolve_checkpoint(plan)
        config = check_model_type(checkpoint)
        check_free_space(target.parent, required_bytes(checkpoint, config, plan.weight_format))
        versions = installed_versions(EXPORT_PACKAGES)

    with staging_folder(target) as staging:
        if plan.importing:
            say("Copying the model files ...")
            shutil.copytree(plan.local, staging, dirs_exist_ok=True)
            (staging / MANIFEST_NAME).unlink(missing_ok=True)
            weight_format = detect_weight_format(staging)
        else:
            export(checkpoint, staging, plan.weight_format)
            weight_format = plan.weight_format
            versions.update(installed_versions(RUNTIME_PACKAGES))
        if plan.max_pixels:
            set_max_pixels(staging, plan.max_pixels)
        manifest = build_manifest(
            staging,
            source=plan.source,
            weight_format=weight_format,
            imported=plan.importing,
            versions=versions,
            max_pixels=plan.max_pixels,
        )
        write_manifest(staging, manifest)
        say("Validating: loading the model and generating a few tokens ...")
        try:
            say(f"Validation passed ({validate(staging)}).")
        except ModelError as exc:
            raise ConvertError(f"Validation failed: {exc}") from exc
        move_into_place(staging, target, force)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    started = time.perf_counter()
    try:
        plan = make_plan(args)
        target = run(plan, args.force)
    except ConvertError as exc:
        print(f"convert.py: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("convert.py: interrupted; nothing was written to the target.", file=sys.stderr)
        return 130
    except OSError as exc:  # a read-only or full output folder: a sentence, not a traceback
        where = f": {exc.filename}" if exc.filename else ""
        print(
            f"convert.py: error: {exc.strerror or exc}{where}. Choose a writable output "
            "folder with free space (--output).",
            file=sys.stderr,
        )
        return 1
    say(f"Done in {time.perf_counter() - started:.0f} s: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
