"""The installer's tests: the real bundle, built once per module by `installer/build.py` (the
`bundle` tests), and the archive unpacked as a user unpacks it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from installer import layout

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Iterator[Path]:
    """Runs `python installer/build.py` into a temporary dist folder; yields that folder."""
    base = tmp_path_factory.mktemp("bundle")
    dist = base / "dist"
    result = subprocess.run(
        [sys.executable, str(ROOT / "installer" / "build.py"),
         "--distpath", str(dist), "--workpath", str(base / "work")],
        capture_output=True, text=True, cwd=ROOT, timeout=1500,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    shutil.rmtree(base / "work")  # PyInstaller's intermediate files
    yield dist
    shutil.rmtree(base)  # ~700 MB that pytest would otherwise keep for three runs


@pytest.fixture(scope="module")
def unpacked(built, tmp_path_factory) -> Iterator[Path]:
    """The archive as a user unpacks it: the bundle that the smoke tests run."""
    target = tmp_path_factory.mktemp("unpacked")
    archive = built / layout.archive_name()
    if archive.suffix == ".zip":
        zipfile.ZipFile(archive).extractall(target)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="tar")
    yield target / layout.APP_DIR
    shutil.rmtree(target)
