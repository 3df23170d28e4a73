"""Findings kept per CPU: what this CPU and its OpenVINO are (the key), and a small JSON file of
records by key, kept in the user data folder.

Two findings are kept this way: the OCR's INT8 check (`ocr/int8_check.py`) and the engine's
precisions chosen by measurement (`engine/tuning.py`). Each depends on the kernels OpenVINO
picks, so each is made again when the CPU, its flags, an ISA cap or a version changes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable
from pathlib import Path

from desktop.core import atomic, paths
from desktop.core.bounded_json import read_json_object

log = logging.getLogger(__name__)


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU's flags as Linux lists them; none elsewhere (OpenVINO's name and capabilities
    then stand for the CPU)."""
    try:
        text = cpuinfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def cpu_identity() -> dict[str, str]:
    """What the kernels OpenVINO picks depend on: the CPU, its flags, a oneDNN cap, the
    versions."""
    import openvino as ov

    from desktop import __version__

    core = ov.Core()
    flags = " ".join(sorted(cpu_flags()))
    return {
        "cpu": str(core.get_property("CPU", "FULL_DEVICE_NAME")),
        "capabilities": " ".join(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")),
        "flags": hashlib.sha256(flags.encode()).hexdigest()[:16],
        "isa_cap": os.environ.get("ONEDNN_MAX_CPU_ISA", ""),
        "openvino": ov.__version__,
        "desklens": __version__,
    }


def records_file(name: str, env: str) -> Path:
    """The data folder's file `name`, unless `env` names another (the test suite shares one
    between its many data folders: a finding is the CPU's, and making it takes seconds)."""
    override = os.environ.get(env)
    return Path(override) if override else paths.user_data_dir() / name


def key_of(identity: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]


def _records(target: Path, section: str) -> dict:
    """The file's records (under its one key, `section`); none for a missing, damaged or
    foreign file."""
    try:
        records = read_json_object(target).get(section, {})
    except (OSError, ValueError, AttributeError, TypeError):
        return {}
    return dict(records) if isinstance(records, dict) else {}


def read_record(target: Path, section: str, key: str) -> dict | None:
    """The record kept under `key`, or None."""
    entry = _records(target, section).get(key)
    return entry if isinstance(entry, dict) else None


def read_fields(target: Path, section: str, key: str, names: Iterable[str]) -> dict | None:
    """The values of `names` in the record kept under `key`; None where it lacks one."""
    entry = read_record(target, section, key)
    if entry is None or any(name not in entry for name in names):
        return None
    return {name: entry[name] for name in names}


def write_record(target: Path, section: str, key: str, record: dict, kept: int) -> None:
    """Adds the record (the oldest beyond `kept` dropped); a folder that cannot be written
    keeps nothing (the caller keeps its finding for this process)."""
    records = _records(target, section)
    records.pop(key, None)
    records[key] = {**record, "checked": time.time()}
    kept_records = dict(list(records.items())[-kept:])
    try:
        atomic.write_text(target, json.dumps({section: kept_records}, indent=1) + "\n", mkdir=True)
    except OSError as exc:
        log.warning("Could not keep a finding about this CPU in %s: %s", target, exc)


def forget_record(target: Path, section: str, key: str) -> bool:
    """Drops the record under `key` (measure again at next use); False when there was none."""
    records = _records(target, section)
    if records.pop(key, None) is None:
        return False
    atomic.write_text(target, json.dumps({section: records}, indent=1) + "\n")
    return True
