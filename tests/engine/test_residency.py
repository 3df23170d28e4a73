"""Releasing mapped weight files after warm-up: pages leave RSS, data stays readable, answers
are unchanged."""

from __future__ import annotations

import mmap
import sys
from pathlib import Path

import numpy as np
import pytest

from desktop.core.chat import Conversation, GenerationSettings
from desktop.core.engine import EngineConfig, VLMEngine
from desktop.core.engine.residency import mapped_ranges, release_mapped_files
from desktop.core.images import load_image

linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="release_mapped_files is a no-op off Linux"
)


def _resident_kib(path: Path) -> int:
    """Rss of every mapping of `path` in this process, from /proc/self/smaps."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(None, 5)
        if len(head) >= 5 and "-" in head[0] and ":" in head[3]:  # a mapping's header line
            inside = len(head) == 6 and head[5].strip() == str(path.resolve())
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


def test_mapped_ranges_picks_only_the_named_files(tmp_path):
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    maps = (
        f"7f0000000000-7f0000002000 r--p 00000000 08:01 11 {a}\n"
        f"7f0000002000-7f0000003000 r--p 00002000 08:01 11 {a}\n"
        f"7f0000004000-7f0000005000 r--p 00000000 08:01 12 {b}\n"
        "7f0000006000-7f0000007000 rw-p 00000000 00:00 0 \n"
    )
    ranges = mapped_ranges([a], maps)
    assert ranges == [(0x7F0000000000, 0x7F0000002000), (0x7F0000002000, 0x7F0000003000)]


@linux_only
def test_released_pages_leave_rss_and_read_back_identically(tmp_path):
    data = np.random.default_rng(0).integers(0, 255, 8 * 2**20, dtype=np.uint8).tobytes()
    path = tmp_path / "weights.bin"
    path.write_bytes(data)
    with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
        assert m[:] == data  # touches every page
        assert _resident_kib(path) >= 8 * 1024 * 0.9
        assert release_mapped_files([path]) == len(data)
        assert _resident_kib(path) < 64
        assert m[:] == data  # faulted back in from the file, unchanged


def test_warm_up_at_load_changes_no_answer(tiny_ir, sample_image):
    image = load_image(sample_image)
    settings = GenerationSettings(max_new_tokens=12, ignore_eos=True)
    texts = []
    for warm in (True, False):
        engine = VLMEngine.load(tiny_ir, EngineConfig(warm_up=warm, inference_precision="f32"))
        assert engine.language.kv_length == 0  # the warm-up left no trace in the KV state
        first = engine.ask(Conversation(), "Describe.", [image], settings)
        assert first.ok and first.stats.images_encoded == 1  # warm-up cached no image
        texts.append(first.text)
    assert texts[0] == texts[1]
