"""`desklens tray`: a tray icon (capture → text, capture → ask, open the app, quit) and a
global shortcut that captures a screen region."""

from __future__ import annotations

import argparse
import sys

from desktop.cli import exit_codes


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "tray",
        help="a tray icon and a global shortcut for screen captures",
        description="Show DeskLens in the system tray and take a global shortcut that "
        "captures a screen region (X11: a key grab; Windows: a hot key; Wayland: the desktop "
        "portal's global shortcuts, else bind `desklens capture` in the desktop's settings). "
        "Runs until Quit or Ctrl+C; one per data folder.",
    )
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument(
        "--shortcut",
        metavar="KEYS",
        help="the global shortcut, e.g. Ctrl+Alt+Shift+T (default: Settings > Tray)",
    )
    keys.add_argument(
        "--no-shortcut", action="store_true", help="the tray icon only, no global shortcut"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from desktop.core import paths
    from desktop.gui.tray.keys import ShortcutError, parse_shortcut

    if args.shortcut is not None:
        try:
            parse_shortcut(args.shortcut)
        except ShortcutError as exc:
            print(f"desklens tray: error: {exc}", file=sys.stderr)
            return exit_codes.USAGE
    from desktop.core.terminal_text import terminal_text
    from desktop.gui.platform_check import forget_dead_wayland, platform_problem

    problem = platform_problem()  # Qt aborts the process when its platform plugin cannot load
    forget_dead_wayland()
    if problem is not None:
        print(f"desklens tray: error: {terminal_text(problem)}", file=sys.stderr)
        return exit_codes.FAILED
    from desktop.gui.tray.standalone import run_tray

    return run_tray(paths.user_data_dir(), args.shortcut, use_shortcut=not args.no_shortcut)
