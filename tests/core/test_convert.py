"""convert.py: export, compression, manifest, staging, import and its error messages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import convert
from desktop.core.manifest import MANIFEST_NAME, read_manifest, sha256_file, verify_model_dir
from desktop.core.model_registry import find_models
from devkit.tiny_models import run_convert

pytestmark = pytest.mark.slow


def weight_precisions(folder: Path, name: str = "openvino_language_model") -> dict[str, int]:
    """Element count of large weight constants by type, for constants that feed MatMul/Gather
    (directly or through the Convert/Subtract/Multiply decompression chain)."""
    import openvino as ov

    model = ov.Core().read_model(folder / f"{name}.xml")
    counts: dict[str, int] = {}
    for op in model.get_ops():
        if op.get_type_name() != "Constant":
            continue
        size = int(np.prod(list(op.get_output_shape(0)))) if op.get_output_shape(0) else 1
        if size < 1024:
            continue
        frontier, feeds_weights_user = [op], False
        for _ in range(6):  # walk the decompression chain (Convert, Subtract, Multiply, Reshape)
            nxt = []
            for node in frontier:
                for target in node.output(0).get_target_inputs():
                    user = target.get_node()
                    if user.get_type_name() in ("MatMul", "Gather", "Convolution"):
                        feeds_weights_user = True
                    nxt.append(user)
            frontier = nxt
        if feeds_weights_user:
            kind = op.get_element_type().get_type_name()
            counts[kind] = counts.get(kind, 0) + size
    return counts


def test_help_lists_the_options():
    result = run_convert("--help")
    assert result.returncode == 0
    for flag in ("--model", "--weight-format", "--output", "--force", "--max-pixels"):
        assert flag in result.stdout


def test_bad_flag_combination_is_refused_with_a_message(tiny_ir, tmp_path):
    result = run_convert("--model", str(tiny_ir), "--weight-format", "int4")
    assert result.returncode == 2
    assert "--weight-format cannot be used when importing" in result.stderr
    assert "Traceback" not in result.stderr
    result = run_convert("--model", str(tiny_ir), "--max-pixels", "10")
    assert result.returncode == 2
    assert "--max-pixels must be at least 1024" in result.stderr


def test_default_conversion_gives_int8_weights_and_a_true_manifest(tiny_ir):
    for name in ("openvino_language_model", "openvino_vision_embeddings_merger_model"):
        counts = weight_precisions(tiny_ir, name)
        assert counts.get("i8", 0) + counts.get("u8", 0) > 0, counts
        assert counts.get("f32", 0) == 0, f"large f32 weights left in {name}: {counts}"
    manifest = read_manifest(tiny_ir)
    assert manifest.weight_format == "int8"
    assert manifest.model_type == "qwen3_vl"
    for package in ("openvino", "openvino-tokenizers", "optimum-intel", "nncf", "transformers"):
        assert manifest.versions.get(package), package
    on_disk = {
        p.relative_to(tiny_ir).as_posix()
        for p in tiny_ir.rglob("*")
        if p.is_file() and p.name != MANIFEST_NAME
    }
    assert set(manifest.files) == on_disk
    for name, entry in manifest.files.items():
        assert entry.sha256 == sha256_file(tiny_ir / name), name
        assert entry.size == (tiny_ir / name).stat().st_size
    verify_model_dir(tiny_ir, hashes=True)


def test_int4_conversion_gives_4bit_weights(tiny_ir_int4):
    counts = weight_precisions(tiny_ir_int4)
    assert counts.get("u4", 0) + counts.get("i4", 0) > 0, counts
    assert read_manifest(tiny_ir_int4).weight_format == "int4"


def test_fp32_conversion_keeps_full_precision(tiny_ir_fp32):
    counts = weight_precisions(tiny_ir_fp32)
    assert counts.get("f32", 0) > 0 and not counts.get("i8") and not counts.get("u4"), counts


def test_converted_folder_streams_in_vlm_pipeline(tiny_ir, sample_image):
    import openvino as ov
    import openvino_genai as ov_genai

    pipe = ov_genai.VLMPipeline(str(tiny_ir), "CPU")
    config = ov_genai.GenerationConfig()
    config.max_new_tokens = 8
    chunks: list[str] = []

    def streamer(text: str):
        chunks.append(text)
        return ov_genai.StreamingStatus.RUNNING

    image = ov.Tensor(np.array(sample_image)[None])
    result = pipe.generate(
        "What is written here?", images=[image], generation_config=config, streamer=streamer
    )
    assert len(result.perf_metrics.raw_metrics.m_new_token_times) > 0
    assert "".join(chunks) == result.texts[0]


def test_failure_mid_export_leaves_no_folder(tiny_checkpoint, tmp_path, monkeypatch):
    target = tmp_path / "models" / "tiny"

    def exploding_export(checkpoint, staging, weight_format):
        (staging / "openvino_language_model.xml").write_text("<half written")
        raise RuntimeError("simulated crash during export")

    monkeypatch.setattr(convert, "export", exploding_export)
    with pytest.raises(RuntimeError, match="simulated crash"):
        convert.main(["--model", str(tiny_checkpoint), "--output", str(target)])
    assert not target.exists()
    assert list((tmp_path / "models").iterdir()) == []  # no staging leftovers either

    def interrupted_export(checkpoint, staging, weight_format):
        (staging / "partial.bin").write_bytes(b"\0" * 10)
        raise KeyboardInterrupt

    monkeypatch.setattr(convert, "export", interrupted_export)
    assert convert.main(["--model", str(tiny_checkpoint), "--output", str(target)]) == 130
    assert list((tmp_path / "models").iterdir()) == []


def test_leftovers_of_a_killed_run_are_cleaned_and_never_listed(tmp_path):
    models = tmp_path / "models"
    dead = models / f"{convert.TMP_PREFIX}tiny-999999999"
    dead.mkdir(parents=True)
    (dead / MANIFEST_NAME).write_text("{}")
    assert find_models([models]) == []
    assert convert.clean_leftovers(models) == [dead]
    assert not dead.exists()


def test_import_registers_a_valid_folder(tiny_ir, tmp_path, monkeypatch):
    source = tmp_path / "Qwen3-VL-tiny-int8-ov"
    shutil.copytree(tiny_ir, source)
    (source / MANIFEST_NAME).unlink()  # as downloaded from a hub: no DeskLens manifest
    models = tmp_path / "models"
    target = models / source.name
    assert convert.main(["--model", str(source), "--output", str(target)]) == 0
    manifest = verify_model_dir(target, hashes=True)
    assert manifest.imported and manifest.weight_format == "int8"
    assert manifest.versions.get("transformers")  # read from the IR's own metadata
    assert [e.name for e in find_models([models])] == [source.name]


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_import_refuses_a_damaged_folder_naming_the_file(tiny_ir, tmp_path, damage, capsys):
    source = tmp_path / "damaged"
    shutil.copytree(tiny_ir, source)
    victim = source / "openvino_language_model.bin"
    if damage == "missing":
        victim.unlink()
    else:
        victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 3])
    target = tmp_path / "models" / "damaged"
    assert convert.main(["--model", str(source), "--output", str(target)]) == 1
    err = capsys.readouterr().err
    assert "openvino_language_model.bin" in err
    assert not target.exists()


def test_hub_unreachable_says_how_to_work_offline(tmp_path):
    result = run_convert(
        "--model", "Qwen/Qwen3-VL-2B-Instruct", "--output", str(tmp_path / "m"),
        env={"HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert result.returncode == 1
    assert "Could not download Qwen/Qwen3-VL-2B-Instruct" in result.stderr
    assert "--model /path/to" in result.stderr and "Traceback" not in result.stderr


def test_unsupported_model_type_lists_supported_ones(tmp_path, capsys):
    checkpoint = tmp_path / "llama"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text(json.dumps({"model_type": "llama"}))
    assert convert.main(["--model", str(checkpoint), "--output", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "'llama'" in err and "qwen3_vl" in err


def test_existing_output_needs_force(tiny_checkpoint, tmp_path, capsys):
    target = tmp_path / "exists"
    target.mkdir()
    assert convert.main(["--model", str(tiny_checkpoint), "--output", str(target)]) == 2
    assert "Pass --force" in capsys.readouterr().err


def test_not_enough_disk_is_checked_before_starting(tiny_checkpoint, tmp_path, monkeypatch, capsys):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(convert.shutil, "disk_usage", lambda p: usage._replace(free=1024))
    called = []
    monkeypatch.setattr(convert, "export", lambda *a: called.append(a))
    assert convert.main(["--model", str(tiny_checkpoint), "--output", str(tmp_path / "o")]) == 1
    assert "Not enough free disk space" in capsys.readouterr().err
    assert called == []


def test_missing_convert_extra_names_the_install_command(
    tiny_checkpoint, tmp_path, monkeypatch, capsys
):
    import builtins

    real_import = builtins.__import__

    def no_optimum(name, *args, **kwargs):
        if name.startswith("optimum"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_optimum)
    assert convert.main(["--model", str(tiny_checkpoint), "--output", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert 'pip install -e ".[convert]"' in err and "optimum" in err


def test_max_pixels_is_written_into_the_preprocessor_config(tiny_ir, tmp_path):
    source = tmp_path / "src"
    shutil.copytree(tiny_ir, source)
    target = tmp_path / "models" / "budget"
    assert (
        convert.main(["--model", str(source), "--output", str(target), "--max-pixels", "200000"])
        == 0
    )
    config = json.loads((target / "preprocessor_config.json").read_text())
    assert config["size"]["longest_edge"] == 200000
    assert read_manifest(target).max_pixels == 200000
