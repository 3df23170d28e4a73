"""Fixtures for tests that download: the tiny INT8 model laid out as a hub repo, and a local
stand-in hub serving it (devkit/hub_server.py). A plugin of the root conftest."""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from devkit.hub_server import LARGE_BYTES, LARGE_FILE, REPO_ID, HubServer, serving


@pytest.fixture(scope="session")
def hub_folder(tiny_ir: Path, tmp_path_factory) -> Path:
    """The tiny converted model as a user finds it on the hub (no desklens.json)."""
    folder = tmp_path_factory.mktemp("hub") / "repo"
    shutil.copytree(tiny_ir, folder, ignore=shutil.ignore_patterns("desklens.json"))
    (folder / LARGE_FILE).write_bytes(random.Random(0).randbytes(LARGE_BYTES))
    (folder / ".gitattributes").write_text("*.bin filter=lfs diff=lfs merge=lfs -text\n")
    return folder


@pytest.fixture
def hub(hub_folder: Path) -> Iterator[HubServer]:
    with serving() as server:
        server.add(REPO_ID, hub_folder)
        yield server
