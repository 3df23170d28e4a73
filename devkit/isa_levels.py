"""The instruction-set levels one machine can check OpenVINO's INT8 paths at.

oneDNN (inside OpenVINO's CPU plugin) honours `ONEDNN_MAX_CPU_ISA`: set before OpenVINO loads,
it caps the kernels at that level, so a VNNI machine can also run the u8·s8 path of a CPU
without VNNI. The levels below are the ones whose INT8 kernels differ (VNNI's one-instruction
dot product against the older two-step one with a 16-bit intermediate); a level is offered only
when this CPU has its instructions. A level can still crash OpenVINO on some CPUs (AVX2 on an
AVX-512 AMD EPYC did, with SIGSEGV; below AVX2 the plugin fails on the OCR's Interpolate
nodes, so no lower level is offered): callers run each level in a child process and treat a
crash as "not checkable here", never as a pass.
"""

from __future__ import annotations

import os

from desktop.core.cpu_records import cpu_flags  # the flags /proc/cpuinfo lists

ENV = "ONEDNN_MAX_CPU_ISA"
NATIVE = "native"  # no cap: what the CPU has

_AVX512 = frozenset({"avx512f", "avx512bw", "avx512vl", "avx512dq"})
_BF16 = _AVX512 | {"avx512_vnni", "avx512_bf16"}
# (oneDNN's name, the /proc/cpuinfo flags it needs), highest first. AMX (Sapphire Rapids and
# later Xeons) multiplies INT8 tiles into 32-bit sums, a kernel of its own: on such a Xeon the
# INT8 recognizer read a lone "-" as "." at this level only (issue 56). oneDNN's AMX level
# includes AVX512-FP16, which every CPU with AMX has.
_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    ("AVX512_CORE_AMX", _BF16 | {"avx512_fp16", "amx_tile", "amx_int8", "amx_bf16"}),
    ("AVX512_CORE_BF16", _BF16),
    ("AVX512_CORE_VNNI", _AVX512 | {"avx512_vnni"}),
    ("AVX512_CORE", _AVX512),
    ("AVX2_VNNI", frozenset({"avx2", "avx_vnni"})),
    ("AVX2", frozenset({"avx2"})),
)
# The levels whose u8·s8 products are summed in 32 bits (no 16-bit pair sum to saturate).
VNNI_LEVELS = frozenset({"AVX512_CORE_AMX", "AVX512_CORE_BF16", "AVX512_CORE_VNNI", "AVX2_VNNI"})


def available_levels(flags: frozenset[str] | None = None) -> list[str]:
    """The native level, then every lower level this CPU has, highest first. The native level
    is the first listed level the CPU has in full; it is not repeated as a cap."""
    flags = cpu_flags() if flags is None else flags
    have = [name for name, needs in _LEVELS if needs <= flags]
    return [NATIVE, *have[1:]]


def native_name(flags: frozenset[str] | None = None) -> str:
    """oneDNN's name for what the CPU has (the first level it has in full)."""
    flags = cpu_flags() if flags is None else flags
    return next((name for name, needs in _LEVELS if needs <= flags), "unknown")


def environment(level: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """A child process's environment for `level` (native: the cap removed)."""
    env = dict(os.environ if base is None else base)
    env.pop(ENV, None)
    if level != NATIVE:
        env[ENV] = level
    return env


def label(level: str, flags: frozenset[str] | None = None) -> str:
    return f"{native_name(flags)} (native)" if level == NATIVE else level
