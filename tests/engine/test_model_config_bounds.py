"""A model folder whose JSON files are hostile (nested 100,000 deep, 200 MB) is refused with a
sentence by `VLMEngine.load` and `desklens ask --model`, before anything parses or reads them
whole; the manifest itself is covered in tests/core/test_hostile_inputs.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from desktop.cli import exit_codes, main
from desktop.core.engine import VLMEngine
from desktop.core.manifest import MANIFEST_NAME, ModelError


def _hostile_copy(tiny_ir: Path, tmp_path: Path, name: str, deep: bool) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(tiny_ir, folder, copy_function=_link_or_copy)
    target = folder / name
    target.unlink()
    if deep:
        target.write_text("[" * 100_000)
    else:
        with target.open("wb") as file:
            file.truncate(200 << 20)  # sparse: costs no disk, and must not be read
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    manifest["files"][name]["size"] = target.stat().st_size  # only the content is hostile
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))
    return folder


def _link_or_copy(source: str, target: str) -> None:
    """Weights are linked (large, never written here); everything else is a real copy, so
    that rewriting the copy's manifest cannot touch the shared fixture's."""
    if source.endswith(".bin"):
        try:
            Path(target).hardlink_to(source)
            return
        except OSError:
            pass
    shutil.copy2(source, target)


@pytest.mark.parametrize("name", ["config.json", "preprocessor_config.json"])
@pytest.mark.parametrize("deep", [True, False], ids=["deep", "huge"])
def test_a_hostile_model_config_is_a_model_error(
    tiny_ir: Path, tmp_path: Path, name: str, deep: bool
) -> None:
    folder = _hostile_copy(tiny_ir, tmp_path, name, deep)
    with pytest.raises(ModelError) as caught:
        VLMEngine.load(folder)
    expected = "nested 100000 levels deep" if deep else "is too large to read (209.7 MB"
    assert expected in str(caught.value) and name in str(caught.value)


def test_ask_with_a_hostile_config_exits_3_without_a_traceback(
    tiny_ir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _hostile_copy(tiny_ir, tmp_path, "config.json", deep=True)
    code = main(["ask", "--model", str(folder), "-q", "hi"])
    err = capsys.readouterr().err
    assert code == exit_codes.MODEL_PROBLEM
    assert err.startswith("desklens: error: The model in") and "nested 100000 levels" in err
