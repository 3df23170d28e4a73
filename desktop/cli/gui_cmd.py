"""`desklens gui [FILE...]` (also `desklens` alone, or `desklens FILE...`): the desktop app,
with the given images or PDFs attached (a file manager's "Open with DeskLens")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop.cli import exit_codes


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gui", help="start the desktop app (the default)", description="Start the desktop app."
    )
    parser.add_argument(
        "files", nargs="*", type=Path, metavar="FILE", help="images or PDFs to attach"
    )
    parser.add_argument("--model", type=Path, metavar="DIR", help="converted model folder to load")
    parser.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="folder for chat history and settings (default: $DESKLENS_DATA_DIR or the "
        "per-user app data folder)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # One app per data folder: when DeskLens is already open on it, that window takes the
    # files (and offers to switch to a --model), instead of a second app loading a second
    # model and writing the same history.
    from desktop.core.ocr.service import default_endpoint, hand_to_open_app
    from desktop.core.paths import user_data_dir

    folder = (args.data_dir or user_data_dir()).expanduser().absolute()
    model = str(args.model.expanduser().absolute()) if args.model else ""
    if hand_to_open_app(args.files, default_endpoint(folder), model):
        print(handed_over_line(len(args.files), model))  # not silence: say what happened
        return 0
    # Qt aborts the process when its platform plugin cannot load: check first, say why.
    from desktop.core.terminal_text import terminal_text
    from desktop.gui.platform_check import forget_dead_wayland, platform_problem

    problem = platform_problem()
    forget_dead_wayland()  # after the check, which names it when nothing else is left
    if problem is not None:
        print(f"desklens: error: {terminal_text(problem)}", file=sys.stderr)
        return exit_codes.FAILED
    from desktop.gui.app import run as run_gui  # Qt is imported only when the GUI starts

    return run_gui(data_dir=args.data_dir, model_dir=args.model, files=args.files)


def handed_over_line(files: int, model: str = "") -> str:
    """What a second `desklens` prints when the open window took over."""
    line = "DeskLens is already open: its window was brought to the front."
    if files:
        what = "1 file" if files == 1 else f"{files} files"
        line = f"DeskLens is already open: {what} attached there, and its window brought forward."
    if model:
        line += f" If it uses another model than {model}, it asks there whether to switch."
    return line
