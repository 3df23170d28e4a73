"""`desklens capture`: a screen region into the OCR or the chat, for a system shortcut.

While a DeskLens window is open, the window captures (its warm OCR; nothing is started here:
this process imports no Qt, no OpenCV, no OpenVINO, and exits). Without one, this process
freezes the screens itself, reads the region with a one-shot OCR and prints the text and puts
it on the clipboard ("ask" opens the app with the capture attached).
"""

from __future__ import annotations

import argparse
import sys

from desktop.cli import exit_codes

# On X11 and Wayland the clipboard's text lives in the process that copied it: held this long
# (or until something else is copied) when no terminal shows the printed text.
DEFAULT_HOLD_S = 600


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "capture",
        help="capture a screen region: its text to the clipboard, or a question about it",
        description="Freeze the screens and drag over a region (Esc cancels, a click takes "
        "the window under the cursor). Meant for a system shortcut; uses the open DeskLens "
        "window when there is one.",
    )
    mode = parser.add_mutually_exclusive_group()
    for flag, help_text in (
        ("copy", "copy the region's text (the default, unless Settings say ask)"),
        ("ask", "attach the region to the chat, to ask about it"),
    ):
        mode.add_argument(
            f"--{flag}", dest="mode", action="store_const", const=flag, help=help_text
        )
    parser.add_argument(
        "--hold",
        type=float,
        metavar="SECONDS",
        help="without the app on X11/Wayland: keep the copied text on the clipboard this long "
        f"or until something else is copied (default: 0 in a terminal, else {DEFAULT_HOLD_S})",
    )
    parser.set_defaults(run=run, mode="")


def run(args: argparse.Namespace) -> int:
    from desktop.core import paths
    from desktop.core.ocr.service import ask_open_app_to_capture

    if args.hold is not None and args.hold < 0:
        print("desklens capture: error: --hold must be 0 or more", file=sys.stderr)
        return exit_codes.USAGE
    # The window of this data folder ($DESKLENS_DATA_DIR, as for `desklens ocr`).
    if ask_open_app_to_capture(args.mode):
        return exit_codes.OK  # the window captures; its note says what happened
    from desktop.core.terminal_text import terminal_text
    from desktop.gui.platform_check import forget_dead_wayland, platform_problem

    problem = platform_problem()
    forget_dead_wayland()  # after the check, which names it when nothing else is left
    if problem is not None:
        print(f"desklens capture: error: {terminal_text(problem)}", file=sys.stderr)
        return exit_codes.FAILED
    from desktop.gui.capture.standalone import capture_once

    hold = args.hold if args.hold is not None else (0 if sys.stdout.isatty() else DEFAULT_HOLD_S)
    return capture_once(args.mode, paths.user_data_dir(), hold_s=hold)
