"""The app's soak: thousands of random user actions (devkit/walk_actions.py) on a real X
server, in sessions of one seed each, the tiny model answering (a soak tests lifetimes and
threads, not speed: any converted model works). A session that fails prints its seed, its last
20 actions and every thread's stack; `python -m devkit.walk --seed S` replays it.

    python bench/app_soak.py --model DIR --actions 5000 [--per-session 500] [--seed S]
    python bench/app_soak.py --smoke --smoke-model DIR    # seconds: 12 actions
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]  # the tests' own Xvfb starter

import smoke  # noqa: E402
from xserver import start_xvfb  # noqa: E402

from devkit.walk import walk  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, help="a converted model folder")
    parser.add_argument("--actions", type=int, default=5000)
    parser.add_argument("--per-session", type=int, default=500, help="actions per seed")
    parser.add_argument("--seed", type=int, help="the first session's seed (then +1, +2, ...)")
    smoke.add_smoke_options(parser, model=True)
    args = parser.parse_args()
    model = args.smoke_model if args.smoke else args.model
    if model is None:
        parser.error("give --model DIR (or --smoke --smoke-model DIR)")
    total, per = (12, 12) if args.smoke else (args.actions, args.per_session)
    first = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    server = start_xvfb((1400, 900))
    rows, failed = [], 0
    try:
        done, session = 0, 0
        while done < total:
            seed, count = first + session, min(per, total - done)
            started = time.monotonic()
            with tempfile.TemporaryDirectory(prefix="desklens-soak-") as folder:
                report = walk(seed, count, model, Path(folder), server.env, timeout_s=7200)
            minutes = (time.monotonic() - started) / 60
            rows.append((seed, len(report.actions), report.restarts, minutes, report.failure))
            if report.failure:
                failed += 1
                print(report.explain(), flush=True)
            done, session = done + count, session + 1
    finally:
        server.stop()
    print("| seed | actions | restarts | minutes | result |")
    print("|---|---|---|---|---|")
    for seed, actions, restarts, minutes, failure in rows:
        result = "failed: " + failure.splitlines()[0] if failure else "passed"
        print(f"| {seed} | {actions} | {restarts} | {minutes:.1f} | {result} |")
    print(f"\n{sum(r[1] for r in rows)} actions in {len(rows)} sessions, {failed} failed.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
