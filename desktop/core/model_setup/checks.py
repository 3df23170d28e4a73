"""What a folder of OpenVINO IR must pass before it becomes a model: files present and
readable, a supported model type, the precision and versions it was made with, and a real
load with the engine that generates a few tokens."""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from desktop.core import bounded_json
from desktop.core.manifest import REQUIRED_FILES, SUPPORTED_MODEL_TYPES
from desktop.core.model_setup.errors import ModelRejected

if TYPE_CHECKING:
    from PIL import Image

IR_MARKER = "openvino_language_model.xml"  # what makes a folder converted IR, not a checkpoint
_RT_INFO_PACKAGES = {
    "optimum_intel_version": "optimum-intel",
    "transformers_version": "transformers",
    "nncf_version": "nncf",
    "pytorch_version": "torch",
}


def is_ir_folder(folder: Path) -> bool:
    return (folder / IR_MARKER).is_file()


def read_json(path: Path) -> dict:
    try:
        data = bounded_json.read_json(path)
    except OSError as exc:
        raise ModelRejected(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    except ValueError as exc:
        raise ModelRejected(f"{path.name} in {path.parent} is damaged: {exc}.") from exc
    if not isinstance(data, dict):
        raise ModelRejected(f"{path.name} in {path.parent} is damaged: not a JSON object.")
    return data


def check_model_type(folder: Path) -> dict:
    """The folder's config.json, if it holds a model type DeskLens runs."""
    config = read_json(folder / "config.json")
    model_type = config.get("model_type")
    if model_type not in SUPPORTED_MODEL_TYPES:
        raise ModelRejected(
            f"{folder} holds a '{model_type}' model, which DeskLens cannot run. "
            f"Supported model types: {', '.join(SUPPORTED_MODEL_TYPES)} "
            "(e.g. Qwen/Qwen3-VL-2B-Instruct)."
        )
    return config


def check_ir_files(folder: Path) -> None:
    """Refuses an IR folder with a missing or truncated file, naming the file."""
    import openvino as ov
    import openvino_tokenizers  # noqa: F401  (tokenizer IR needs its ops registered)

    for name in REQUIRED_FILES:
        if not (folder / name).is_file():
            raise ModelRejected(f"{folder} is incomplete: {name} is missing.")
    core = ov.Core()
    for xml in sorted(folder.glob("openvino_*.xml")):
        try:
            core.read_model(xml)
        except Exception as exc:  # the reader reports truncation as a generic RuntimeError
            raise ModelRejected(
                f"{xml.with_suffix('.bin').name} (or {xml.name}) in {folder} is damaged or "
                "truncated: OpenVINO cannot read it. Copy or download it again."
            ) from exc
    for name in ("config.json", "preprocessor_config.json"):
        read_json(folder / name)


def detect_weight_format(folder: Path) -> str:
    """Precision of the language model's weights: optimum-intel's openvino_config.json says it
    when present; otherwise the IR's constants do."""
    config_path = folder / "openvino_config.json"
    if config_path.is_file():
        with contextlib.suppress(ModelRejected):
            quant = read_json(config_path).get("quantization_config") or {}
            bits = quant.get("bits") or (quant.get("quantization_configs") or {}).get(
                "lm_model", {}
            ).get("bits")
            if bits in (4, 8):
                return f"int{bits}"
    import openvino as ov

    model = ov.Core().read_model(folder / IR_MARKER)
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
    """Versions recorded by optimum-intel inside the IR (for imported or downloaded folders)."""
    import openvino as ov

    model = ov.Core().read_model(folder / IR_MARKER)
    versions = {}
    for key, package in _RT_INFO_PACKAGES.items():
        with contextlib.suppress(Exception):
            versions[package] = model.get_rt_info(["optimum", key]).astype(str)
    with contextlib.suppress(Exception):
        runtime = model.get_rt_info(["Runtime_version"]).astype(str)
        versions["openvino"] = runtime.split("-")[0]
    return versions


@dataclass
class _Probe:  # what the engine reads of a LoadedImage
    image: Image.Image
    digest: str


def validate_by_generating(folder: Path) -> str:
    """Loads the folder with DeskLens's engine and generates a few tokens for a test image;
    returns a short summary of the run."""
    import numpy as np
    from PIL import Image

    from desktop.core.chat import Conversation, GenerationSettings
    from desktop.core.engine import VLMEngine
    from desktop.core.manifest import ModelError

    rng = np.random.default_rng(0)
    picture = Image.fromarray(rng.integers(0, 255, (128, 192, 3), dtype=np.uint8))
    probe = _Probe(picture, hashlib.sha256(picture.tobytes()).hexdigest())
    try:
        engine = VLMEngine.load(folder)
        answer = engine.ask(
            Conversation(), "Describe the image.", [probe], GenerationSettings(max_new_tokens=4)
        )
    except ModelError as exc:
        raise ModelRejected(f"Validation failed: {exc}") from exc
    except Exception as exc:  # OpenVINO's own errors are long C++ traces: keep the first line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ModelRejected(f"Validation failed: the engine could not run it ({first}).") from exc
    if answer.error:
        raise ModelRejected(f"Validation failed: {answer.error}")
    return f"{answer.stats.generated_tokens} tokens in {answer.stats.total_s:.1f} s"
