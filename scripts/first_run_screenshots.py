#!/usr/bin/env python3
"""Screenshots of the first-run Download for docs/GUI.md, taken against the stand-in hub.

    Xvfb :7 -screen 0 1400x900x24 &
    DISPLAY=:7 QT_QPA_PLATFORM=xcb .venv/bin/python scripts/first_run_screenshots.py MODEL_DIR

MODEL_DIR is a converted model (e.g. the tests' tiny INT8 one); it is served from 127.0.0.1
as a hub repo, the app starts with an empty data folder, Download is clicked, and the screen
is captured with ImageMagick's `import` before, during (the server holds the last file back)
and after. The tiny model's files are small: the sizes in the pictures are the tiny model's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from devkit.hub_server import LARGE_BYTES, LARGE_FILE, REPO_ID, HubServer, hub_env  # noqa: E402

SHOTS = ROOT / "docs" / "screenshots"


def shoot(name: str) -> None:
    from PySide6.QtWidgets import QApplication

    for _ in range(20):  # let the window paint what it has
        QApplication.processEvents()
    geometry = "1280x800+0+0"  # the window, placed at the screen's corner
    command = ["import", "-window", "root", "-crop", geometry, str(SHOTS / f"{name}.png")]
    subprocess.run(command, check=True)
    print(f"wrote {SHOTS / name}.png")


def main(model_dir: Path) -> int:
    work = Path(tempfile.mkdtemp(prefix="desklens-shots-"))
    repo = work / "repo"
    shutil.copytree(model_dir, repo, ignore=shutil.ignore_patterns("desklens.json"))
    (repo / LARGE_FILE).write_bytes(os.urandom(LARGE_BYTES))
    hub = HubServer().start()
    hub.add(REPO_ID, repo)
    hub.stall = (LARGE_FILE, LARGE_BYTES - 300_000)
    for key, value in hub_env(hub.url, work).items():
        if key.startswith("HF_"):
            os.environ[key] = value
    os.environ.pop("HF_HUB_OFFLINE", None)

    from PySide6.QtCore import QTimer

    from desktop.gui.app import create_app

    app, window = create_app(data_dir=work / "data")
    window.resize(1280, 800)
    box = window.first_run.download
    box.repo_edit.setText(REPO_ID)
    state = {"shot": False}

    def step() -> None:
        last = box._last
        large = last.done - (last.total - LARGE_BYTES) if last else 0
        if not state["shot"] and last and last.file == LARGE_FILE and large >= 2 << 20:
            state["shot"] = True
            shoot("downloading")
            hub.stall = None
            hub.release.set()
        QTimer.singleShot(100, step)

    def loaded() -> None:
        QTimer.singleShot(500, lambda: (shoot("model-ready"), app.quit()))

    window.engine.worker.loaded.connect(loaded)
    QTimer.singleShot(1500, lambda: (shoot("first-run"), box.download_button.click(), step()))
    app.exec()
    window.close()
    hub.stop()
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
