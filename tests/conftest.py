"""Shared fixtures: a tiny random Qwen3-VL checkpoint, converted by the project's own convert.py.

Built once per test session by devkit/model_factory.py, under a file lock: the workers of a
parallel run (pytest-xdist, as `scripts/dev.sh test` runs) share one build in the root of
their temporary folders. Set DESKLENS_TEST_CACHE=/some/dir to keep them between runs while
developing (the folder name includes a hash of the factory and converter, so edits rebuild).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from devkit.tiny_models import run_convert

ROOT = Path(__file__).resolve().parents[1]
pytest_plugins = ["hub_fixtures"]  # the stand-in hub, for the download, first-run and bundle tests

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # tests never reach a hub
os.environ.setdefault("OPENVINO_TELEMETRY_DISABLE", "1")


@pytest.fixture(scope="session", autouse=True)
def _own_data_home(tmp_path_factory) -> Iterator[None]:
    """In a parallel run each worker has its own per-user data folder: the OCR's compiled-model
    cache there is written by OpenVINO without a lock between processes."""
    shared = tmp_path_factory.getbasetemp()
    with pytest.MonkeyPatch.context() as patch:
        if os.environ.get("PYTEST_XDIST_WORKER"):
            patch.setenv("XDG_DATA_HOME", str(shared / "data-home"))
            shared = shared.parent  # the workers' common folder
        # The OCR's INT8 check is the CPU's: one verdict for every data folder the tests make
        # (tests/ocr/test_int8_check.py checks the data folder's own file).
        patch.setenv("DESKLENS_OCR_VERDICTS", str(shared / "ocr-int8-verdicts.json"))
        # The engine's precisions measured per CPU and model, likewise (tests/engine/test_tuning.py
        # checks the data folder's own file).
        patch.setenv("DESKLENS_ENGINE_CHOICES", str(shared / "engine-precisions.json"))
        # Compiled OCR models, likewise (~2 s a fresh data folder): one folder per worker, as
        # OpenVINO writes its cache without a lock between processes.
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        patch.setenv("DESKLENS_OCR_CACHE_DIR", str(shared / f"ocr-cache-{worker}"))
        yield


@pytest.fixture(autouse=True)
def _no_pictures_kept_from_another_test() -> None:
    """The process's picture store starts empty for each test (a deleted or damaged file must
    not be read from an earlier test's pixels)."""
    from desktop.core.pictures import SHARED

    SHARED.clear()


def _build_key() -> str:
    digest = hashlib.sha256()
    for path in (ROOT / "devkit" / "model_factory.py", ROOT / "convert.py"):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@pytest.fixture(scope="session")
def artifacts_dir(tmp_path_factory) -> Path:
    cache = os.environ.get("DESKLENS_TEST_CACHE")
    if cache:
        folder = Path(cache) / _build_key()
    elif os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.getbasetemp().parent / "tiny-models"  # shared by the workers
    else:
        return tmp_path_factory.mktemp("tiny-models")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def _building(artifacts_dir: Path) -> Iterator[None]:
    """One process builds at a time; the others then find its result."""
    from filelock import FileLock

    with FileLock(artifacts_dir / "build.lock"):
        yield


@pytest.fixture(scope="session")
def tiny_checkpoint(artifacts_dir: Path) -> Path:
    from devkit.model_factory import build_checkpoint

    folder = artifacts_dir / "tiny-qwen3-vl"
    with _building(artifacts_dir):
        if not (folder / "model.safetensors").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            build_checkpoint(folder)
    return folder


def _converted(artifacts_dir: Path, checkpoint: Path, weight_format: str) -> Path:
    target = artifacts_dir / "ir" / f"tiny-{weight_format}"
    with _building(artifacts_dir):
        if not (target / "desklens.json").is_file():
            result = run_convert(
                "--model", str(checkpoint), "--weight-format", weight_format,
                "--output", str(target), "--force",
            )  # fmt: skip
            assert result.returncode == 0, result.stdout + result.stderr
    return target


@pytest.fixture(scope="session")
def tiny_ir(artifacts_dir: Path, tiny_checkpoint: Path) -> Path:
    """The tiny model converted with the default settings (INT8 weights)."""
    return _converted(artifacts_dir, tiny_checkpoint, "int8")


@pytest.fixture(scope="session")
def tiny_ir_fp32(artifacts_dir: Path, tiny_checkpoint: Path) -> Path:
    """Full precision: what the exactness test against transformers needs."""
    return _converted(artifacts_dir, tiny_checkpoint, "fp32")


@pytest.fixture(scope="session")
def tiny_ir_int4(artifacts_dir: Path, tiny_checkpoint: Path) -> Path:
    return _converted(artifacts_dir, tiny_checkpoint, "int4")


@pytest.fixture
def sample_image():
    """A small document-like picture with some structure (not a flat colour)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (320, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 10, 310, 40), fill=(30, 60, 200))
    for row in range(5):
        draw.text((16, 60 + row * 24), f"Line {row}: total {row * 7}.50", fill="black")
    return image


# Files that run for minutes with few tests. The two workers take whole files (--dist loadfile)
# in collection order; xdist's own order (most tests first) put these among the last, where one
# worker ran on alone for minutes. Longest first, then xdist's order (`--no-loadscope-reorder`
# in scripts/dev.sh keeps this one).
LONG_FILES = (
    "tests/gui/test_gui_random_session.py",  # 400 app actions under Xvfb
    "tests/installer/test_installer.py",  # the PyInstaller bundle build
    "tests/bench/test_bench_smoke.py",  # every bench script started
    "tests/api/test_memory.py",  # 100-megapixel images
    "tests/ocr/test_int8_every_cpu.py",  # the check pages at every instruction-set level
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    tests_in = Counter(file_of(item) for item in items)
    first = {name: rank for rank, name in enumerate(LONG_FILES)}
    # Stable: a file's tests keep their order.
    items.sort(key=lambda item: (first.get(file_of(item), len(first)), -tests_in[file_of(item)]))
