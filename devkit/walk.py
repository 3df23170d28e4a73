"""The random-session walk from outside: runs devkit/walk_child.py in a child process (under
the X server `env` names), starts it again after each planned quit-mid-answer, and turns a
crash, a hang or a failed check into a report with the seed, the last 20 actions and the
child's last words (faulthandler's stacks). `python -m devkit.walk --seed S --actions N`
replays a seed (under the DISPLAY you give it)."""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SILENCE_S = 300  # no action line for this long: the app hangs (an answer takes seconds)
LAST = 20
CYCLE_VARIABLE = "DESKLENS_WALK_CYCLE"  # "settings,ask": those actions in turn


@dataclass
class WalkReport:
    seed: int
    actions: list[str] = field(default_factory=list)  # what ran, in order
    restarts: int = 0
    failure: str = ""  # "" when every action passed
    cycle: tuple[str, ...] = ()

    def explain(self) -> str:
        last = "\n".join(f"  {line}" for line in self.actions[-LAST:])
        return (
            f"random session, seed {self.seed}: {self.failure}\n"
            f"last {min(LAST, len(self.actions))} actions:\n{last}\n"
            f"replay: {CYCLE_VARIABLE}={','.join(self.cycle)} python -m devkit.walk "
            f"--seed {self.seed} --actions {len(self.actions)}"
        )


def make_pictures(folder: Path) -> None:
    """What the walk attaches: a line of text, an invoice with a table, a page with an
    e-mail address and a card number (redaction finds them), a photo-like gradient."""
    import random

    from desktop.core.ocr.rendered_pages import render_lines
    from devkit.table_pages import invoice

    folder.mkdir(parents=True, exist_ok=True)
    render_lines(["Invoice 4471 due 2024-10-17"], size=40, width=760, height=140, top=40,
                 ink=(0, 0, 0)).save(folder / "line.png")  # fmt: skip
    invoice(random.Random(7)).image.save(folder / "invoice.png")
    private = ["Write to jo.doe@example.com", "Card 4111 1111 1111 1111"]
    render_lines(private, size=34, width=900, height=200, top=30, ink=(20, 20, 20)).save(
        folder / "private.png"
    )
    gradient = Image.linear_gradient("L").resize((480, 320)).convert("RGB")
    gradient.save(folder / "photo.png")


def walk(
    seed: int,
    count: int,
    model: Path,
    data: Path,
    env: dict[str, str],
    timeout_s: float,
    cycle: tuple[str, ...] = (),
) -> WalkReport:
    """Runs the seed's `count` actions (or `cycle`'s in turn); the report says what failed."""
    env = {**env, CYCLE_VARIABLE: ",".join(cycle)}
    make_pictures(data / "pictures")
    (data / "out").mkdir(exist_ok=True)
    report = WalkReport(seed, cycle=cycle)
    start = 0
    while start < count:
        last = _run_child(seed, start, count, model, data, env, report, timeout_s)
        if last.get("event") != "restart":
            if last.get("event") != "done" and not report.failure:
                report.failure = str(last.get("why") or last)
            return report
        report.restarts += 1
        start = int(last["next"])
    return report


def _run_child(seed, start, count, model, data, env, report: WalkReport, timeout_s) -> dict:  # noqa: ANN001
    command = [sys.executable, "-X", "faulthandler", "-m", "devkit.walk_child", str(seed),
               str(start), str(count), str(model), str(data)]  # fmt: skip
    child_env = {**env, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1"}
    child = subprocess.Popen(command, cwd=ROOT, env=child_env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[str] = []
    threading.Thread(target=_pump, args=(child.stdout, lines.put, True), daemon=True).start()
    reader = threading.Thread(target=_pump, args=(child.stderr, errors.append, False))
    reader.start()
    last: dict = {}
    while True:
        try:
            line = lines.get(timeout=min(SILENCE_S, timeout_s))
        except queue.Empty:
            report.failure = f"no action finished for {SILENCE_S} s: the app hangs"
            child.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
            break
        if line is None:
            break
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        if event["event"] == "action":
            report.actions.append(f"{event['n']}: {event['name']} {' '.join(event['notes'])}")
        else:
            last = event
    code = child.wait(timeout=120)
    reader.join(timeout=30)
    if not last and not report.failure:
        report.failure = f"the app died (exit status {code})"
    if report.failure or last.get("event") == "failed":
        report.failure = (report.failure or str(last.get("why"))) + "\n" + "".join(errors)[-4000:]
    return last


def _pump(stream, put, says_end: bool) -> None:  # noqa: ANN001
    for line in stream:
        put(line)
    if says_end:
        put(None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--actions", type=int, default=300)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--data", type=Path, required=True)
    args = parser.parse_args(argv)
    cycle = tuple(name for name in os.environ.get(CYCLE_VARIABLE, "").split(",") if name)
    env = dict(os.environ)
    report = walk(args.seed, args.actions, args.model, args.data, env, 3600 * 4, cycle)
    passed = f"seed {args.seed}: {len(report.actions)} actions, {report.restarts} restarts, passed"
    print(report.explain() if report.failure else passed)
    return 1 if report.failure else 0


if __name__ == "__main__":
    sys.exit(main())
