"""What the engine holds and does, as the window knows it: one frozen value.

The engine worker's conversation service is the one owner of what the engine holds; its
results (answers, preparations) carry it, and `EngineController` folds them, with what it
asked for (a load, a question, a Local API request under way), into the one `EngineStatus`
it announces with `status_changed`. The flows read that value; none keeps a copy of its own.
Qt-free, so a test can build one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.core.conversation.engine_protocol import ModelInfo
    from desktop.core.remote.config import ServerConfig


@dataclass(frozen=True)
class LocalModel:
    """This computer's model, in `folder`."""

    folder: str


@dataclass(frozen=True)
class ServerModel:
    """A model server's model (the saved server's settings)."""

    config: ServerConfig

    @property
    def host(self) -> str:
        return self.config.host


ModelSource = LocalModel | ServerModel


@dataclass(frozen=True)
class EngineStatus:
    source: ModelSource | None = None  # what was asked to load last (None: nothing yet)
    model: ModelInfo | None = None  # the loaded model (None while loading, without one)
    holds: int | None = None  # the stored chat whose turns the engine's state holds
    asking: bool = False  # a question of the user's is queued or being answered
    api: bool = False  # a Local API request is being answered on the engine's thread

    @property
    def loaded(self) -> bool:
        return self.model is not None

    @property
    def server(self) -> str:
        """The host whose model is loaded ("" for this computer's model, or none)."""
        return self.model.server if self.model is not None else ""

    @property
    def busy(self) -> bool:
        """The engine's thread answers something (the user's question or an API request)."""
        return self.asking or self.api
