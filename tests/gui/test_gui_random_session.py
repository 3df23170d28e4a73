"""The app used as people use it (issue 55): a long random session on a real X server (Xvfb,
the xcb platform), with the tiny model — Settings changed (every page, OK, Cancel, Esc), then
asking; pictures pasted, attached, boxed, redacted and captured; Stop, Regenerate, Edit,
Retry; chats switched, deleted and reopened; text extracted and tables saved; the window
resized down to its minimum; the app quit mid-answer and started again. After every action:
the process is alive, its GUI thread answered within 2 s, nothing raised or logged an error,
and the history agrees with the window (devkit/walk_child.py).

A new seed each run, printed (issue 55: a walk finds what no scripted test thought of; seed
90180, found so in CI, has its own test in test_gui_rewind.py). `DESKLENS_WALK_SEED=N`
replays one, `DESKLENS_WALK_ACTIONS` sets the length (bench/app_soak.py runs thousands). A
failure prints the seed, the last 20 actions and every thread's stack."""

from __future__ import annotations

import os
import random

import pytest
from xserver import XServerMissing, start_xvfb

from devkit.walk import walk

ACTIONS = int(os.environ.get("DESKLENS_WALK_ACTIONS", "300"))
SEED = int(os.environ.get("DESKLENS_WALK_SEED") or random.SystemRandom().randrange(10**6))


@pytest.fixture(scope="module")
def x_server():
    try:
        server = start_xvfb((1400, 900))
    except XServerMissing as exc:
        pytest.fail(str(exc))
    yield server
    server.stop()


def test_a_random_session_of_hundreds_of_actions_never_crashes_hangs_or_loses_track(
    x_server, tiny_ir, tmp_path
):
    print(f"random session seed {SEED} ({ACTIONS} actions)")
    report = walk(SEED, ACTIONS, tiny_ir, tmp_path, x_server.env, timeout_s=3000)
    assert not report.failure, report.explain()
    assert len(report.actions) == ACTIONS


def test_settings_then_ask_fifty_times_in_a_row(x_server, tiny_ir, tmp_path):
    """The walk that crashed the app (issue 55: Settings changed, OK, then a question) 50
    times over: each Settings round changes one thing (or none) and ends with OK, Cancel or
    Esc at random."""
    seed = SEED + 1
    print(f"settings-then-ask seed {seed}")
    report = walk(seed, 100, tiny_ir, tmp_path, x_server.env, 3000, cycle=("settings", "ask"))
    assert not report.failure, report.explain()
    assert [line.split()[1] for line in report.actions] == ["settings", "ask"] * 50
