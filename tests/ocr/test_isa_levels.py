"""devkit/isa_levels.py names the CPU's own instruction-set level (AMX included) and offers the
lower levels oneDNN can be capped at (issue 56)."""

from __future__ import annotations

from pathlib import Path

from desktop.core.cpu_records import cpu_flags
from devkit import isa_levels

AVX2 = frozenset(["sse4_2", "fma", "avx", "avx2", "bmi2"])  # Core 8th-10th gen, AMD Zen 2/3
AVX512 = AVX2 | {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}  # Skylake-SP
ZEN4 = AVX512 | {"avx512_vnni", "avx512_bf16"}
SAPPHIRE_RAPIDS = ZEN4 | {"avx_vnni", "avx512_fp16", "amx_tile", "amx_int8", "amx_bf16"}


def test_the_native_level_is_named_amx_included() -> None:
    names = [isa_levels.native_name(flags) for flags in (AVX2, AVX512, ZEN4, SAPPHIRE_RAPIDS)]
    assert names == ["AVX2", "AVX512_CORE", "AVX512_CORE_BF16", "AVX512_CORE_AMX"]
    assert isa_levels.label("native", SAPPHIRE_RAPIDS) == "AVX512_CORE_AMX (native)"
    assert isa_levels.native_name(AVX2 - {"avx2"}) == "unknown"


def test_the_levels_below_the_native_one_are_offered() -> None:
    assert isa_levels.available_levels(AVX2) == ["native"]  # AVX2 cannot be capped lower
    assert isa_levels.available_levels(SAPPHIRE_RAPIDS) == [
        "native", "AVX512_CORE_BF16", "AVX512_CORE_VNNI", "AVX512_CORE", "AVX2_VNNI", "AVX2",
    ]  # fmt: skip
    assert "AVX512_CORE_AMX" in isa_levels.VNNI_LEVELS  # 32-bit sums: nothing saturates


def test_the_flags_come_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_int8\n\nflags\t: other\n")
    assert cpu_flags(cpuinfo) == {"fpu", "avx2", "amx_int8"}
    assert cpu_flags(tmp_path / "missing") == frozenset()
