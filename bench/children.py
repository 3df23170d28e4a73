"""Each measured runtime in its own process, so that its peak RSS and its threads are its own.

A bench script calls `child_main(CHILDREN)` first thing in main(): when started as
`script --child KIND ARG...` it runs CHILDREN[KIND](*ARGS) and prints the result as one JSON line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable


def run_child(script: str, kind: str, *args: object, timeout: int = 3600) -> dict:
    """Runs `script --child kind args...` and returns its JSON result, or {"error": ...}."""
    cmd = [sys.executable, script, "--child", kind, *map(str, args)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        return {"error": result.stderr.strip().splitlines()[-1] if result.stderr else "failed"}
    return json.loads(result.stdout.strip().splitlines()[-1])


def child_main(children: dict[str, Callable[..., dict]]) -> bool:
    """In a child process: runs the asked child, prints its result; True if this was one."""
    if len(sys.argv) < 3 or sys.argv[1] != "--child":
        return False
    print(json.dumps(children[sys.argv[2]](*sys.argv[3:])))
    return True
