"""Settings > Model > A server: the address checked, and the server asked for its models, off
the GUI thread.

Checking an address may look a name up (plain http is for private networks only, and a name
may resolve to one), and a server may take seconds to answer, so both run in the global
QThreadPool. The result comes back by a queued signal with its request's ticket: a dialog
that closed, or asked again meanwhile, ignores what is no longer its question. Nothing here
runs until the user asks for a server: the window with this computer's model makes no
network call.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from desktop.core.errors import describe
from desktop.core.remote.config import ServerConfig, check_config
from desktop.core.remote.errors import RemoteError
from desktop.gui.workers.threads import run_in_pool

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerCheckResult:
    ticket: int
    config: ServerConfig | None  # with its URL normalized; None when it cannot be used
    models: list[str] | None = None  # what the server offers; None when not asked (or failed)
    error: str | None = None  # one sentence, never the key


def connected_text(config: ServerConfig, models: list[str]) -> str:
    """ "Connected: 2 models (a, b)", or what is wrong with the model asked for."""
    shown = ", ".join(models[:4]) + (", …" if len(models) > 4 else "")
    if not models:
        return f"Connected, but the server at {config.host} offers no model."
    if config.model and config.model not in models:
        return f"Connected, but there is no model named {config.model!r}; it offers: {shown}."
    noun = "model" if len(models) == 1 else "models"
    return f"Connected: {len(models)} {noun} ({shown})"


class ServerCheck(QObject):
    """Runs checks in the thread pool; `done` fires on this object's (the GUI) thread."""

    done = Signal(ServerCheckResult)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tickets = itertools.count(1)

    def submit(self, config: ServerConfig, *, ask_models: bool) -> int:
        """Checks `config` (and with `ask_models`, lists the server's models); the ticket
        that its result will carry."""
        ticket = next(self._tickets)
        run_in_pool(lambda: _check(ticket, config, ask_models), self.done)
        return ticket


def _check(ticket: int, config: ServerConfig, ask: bool) -> ServerCheckResult:
    """The pool thread's work: never raises."""
    try:
        checked = check_config(config)
        models = None
        if ask:
            from desktop.core.remote.engine import list_models

            models = list_models(checked)
        return ServerCheckResult(ticket, checked, models)
    except RemoteError as exc:
        return ServerCheckResult(ticket, None, error=str(exc))
    except Exception as exc:  # never let a pool thread die silently
        logger.exception("checking a server address failed")
        return ServerCheckResult(
            ticket, None, error=f"The server could not be checked: {describe(exc)}"
        )
