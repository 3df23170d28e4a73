"""A capture's crop into the chat of another DeskLens process ("ask" in `desklens capture` and
`desklens tray`): the crop saved to a file of its own, which an open window attaches, or the
app started with it and PICK_BOXES_ENV naming it, so that its capture flow
(gui/flows/capturing.py) opens the box picker on it; or, for the note's Show after "copy the
text", EXTRACT_ENV, so that it shows the crop's extracted text in the chat."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from PySide6.QtGui import QImage

from desktop.gui.capture.overlay import PICK_BOXES_ENV

EXTRACT_ENV = "DESKLENS_CAPTURE_EXTRACT"

# `desklens` arguments and environment variables to add, for a process of its own
Launch = Callable[[Sequence[str], Mapping[str, str]], None]


class CropNotSaved(OSError):
    """The crop could not be written to `path`; each caller says so its own way."""

    def __init__(self, path: Path) -> None:
        super().__init__(f"could not write {path}")
        self.path = path


def launch_desklens(arguments: Sequence[str], env: Mapping[str, str]) -> None:
    # The installed bundle's executable is `desklens` itself; from source it is Python.
    entry = [] if getattr(sys, "frozen", False) else ["-m", "desktop"]
    command = [sys.executable, *entry, *arguments]
    subprocess.Popen(command, start_new_session=True, env={**os.environ, **env})


def open_app_with(
    image: QImage,
    launch: Launch = launch_desklens,
    hand_over: Callable[[Path], bool] = lambda _path: False,
    *,
    extract: bool = False,
) -> Path:
    """Saves `image` in a new temporary folder; `hand_over` gives the file to an open window
    (True when one took it), else `launch` starts the app with it, to draw boxes on it (or,
    `extract`, to show its text). The file's path; raises CropNotSaved."""
    folder = Path(tempfile.mkdtemp(prefix="desklens-capture-"))
    path = folder / f"capture {time.strftime('%H-%M-%S')}.png"
    # PySide6's stubs want bytes for the format; the binding itself takes only str.
    if not image.save(str(path), "PNG"):  # type: ignore[call-overload]
        raise CropNotSaved(path)
    if not hand_over(path):
        launch(["gui", str(path)], {EXTRACT_ENV if extract else PICK_BOXES_ENV: str(path)})
    return path
