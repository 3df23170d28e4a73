"""`desklens history list|export`: the app's chats from the terminal (read-only on the store
except for the exported files)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from desktop.cli import exit_codes
from desktop.cli.common import CliError, fail
from desktop.core import atomic, paths
from desktop.core.history import HistoryError, HistoryStore
from desktop.core.history.export import FORMATS, safe_file_name, write_document
from desktop.core.terminal_text import terminal_text

HISTORY_FOLDER = "history"  # beside settings.ini in the data folder, as the app keeps it


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "history",
        help="list the app's chats or export one as Markdown or HTML",
        description="The desktop app's chats: list them, or export one as a document.",
    )
    parser.add_argument("--data-dir", type=Path, help="the DeskLens data folder")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="the chats, newest first (id, date, title)")
    export = actions.add_parser("export", help="a chat as Markdown (+ images) or HTML")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("id", nargs="?", type=int, help="the chat's id (see `history list`)")
    which.add_argument("--last", action="store_true", help="the most recently updated chat")
    export.add_argument("--format", choices=FORMATS, default="md", help="md (default) or html")
    export.add_argument(
        "--out", type=Path, help="the file to write (default: the chat's title, here)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    folder = (args.data_dir or paths.user_data_dir()) / HISTORY_FOLDER
    try:
        if not (folder / "history.sqlite3").is_file():
            raise CliError(f"no chat history in {folder.parent}", exit_codes.INPUT_PROBLEM)
        with HistoryStore(folder) as store:
            if store.notice is not None:  # a damaged history was moved aside and read back
                print(f"desklens: {terminal_text(store.notice)}", file=sys.stderr)
            if args.action == "list":
                return list_chats(store)
            return export_chat(store, args)
    except HistoryError as exc:
        return fail(CliError(str(exc), exit_codes.INPUT_PROBLEM))
    except CliError as exc:
        return fail(exc)


def list_chats(store: HistoryStore) -> int:
    for chat in store.list_conversations():
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(chat.updated_at))
        title = terminal_text(chat.title, lines=False)
        print(f"{chat.id}\t{when}\t{chat.message_count} messages\t{title}")
    return exit_codes.OK


def export_chat(store: HistoryStore, args: argparse.Namespace) -> int:
    chats = store.list_conversations()
    if args.last:
        if not chats:
            raise CliError("the history has no chats", exit_codes.INPUT_PROBLEM)
        chat_id = chats[0].id
    else:
        chat_id = args.id
    title = store.title_of(chat_id)
    if not title:
        raise CliError(f"no chat with id {chat_id} (see `desklens history list`)", exit_codes.USAGE)
    target = args.out or Path(f"{safe_file_name(title)}.{args.format}")
    try:
        exported = write_document(title, store.messages(chat_id), target, args.format)
    except atomic.WriteError as exc:  # its text is the sentence (the file that failed)
        raise CliError(str(exc.strerror), exit_codes.INPUT_PROBLEM) from exc
    except OSError as exc:  # an output that cannot be written: 4, as README says
        raise CliError(atomic.write_failure(target, exc), exit_codes.INPUT_PROBLEM) from exc
    print(
        f"{exported.path}: {exported.messages} messages, {exported.images} images",
        file=sys.stderr,
    )
    return exit_codes.OK
