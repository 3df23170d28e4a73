"""The core's tests (Qt-free): model setup and conversion use the tiny model; the history
and image tests need no converted model (an empty history store is the common fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.core.history import HistoryStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    with HistoryStore(tmp_path / "history") as opened:
        yield opened
