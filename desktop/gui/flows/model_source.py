"""Which model answers: this computer's (a converted folder; the first-run panel while there is
none) or a model server's (Settings > Model > A server).

The server is off by default; the one saved in Settings (server.json, its key in server.key)
is used only while `AppSettings.model_source` is "server" and the user agreed to send
questions to that address (`consented_servers`, asked by the Settings dialog). Without that,
this flow makes no network call and imports no HTTP client. The server is connected to on
the engine thread (`EngineController.load_remote`): a server that is down or refuses the key
says so in the status bar and a notice, and the app stays usable; an answer that fails there
leaves its question and Retry, and offers this computer's model when there is one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from desktop.core.model_registry import choose_model
from desktop.core.remote import config as remote_config
from desktop.gui.flows.asking import ChatParts
from desktop.gui.panels.chat_page import ChatPage
from desktop.gui.settings import AppSettings
from desktop.gui.workers.engine_status import LocalModel, ServerModel
from desktop.gui.workers.engine_worker import EngineController
from desktop.gui.workers.server_check import ServerCheck
from desktop.gui.workers.storage_worker import StorageController

if TYPE_CHECKING:
    from desktop.core.conversation import AskResult
    from desktop.core.engine import ModelInfo
    from desktop.core.remote.config import ServerConfig

USE_LOCAL = "Use this computer's model"


class ModelFlow(QObject):
    def __init__(
        self,
        parts: ChatParts,
        page: ChatPage,
        engine: EngineController,
        storage: StorageController,
        data_dir: Path,
        explicit_model: str | None,
        apply: Callable[[AppSettings], None],
        parent: QObject,
    ) -> None:
        """`apply(settings)`: the window's way to change the settings (saved, applied)."""
        super().__init__(parent)
        self._parts = parts
        self._page = page
        self._engine = engine
        self._storage = storage
        self._data_dir = data_dir
        self._apply = apply
        self.explicit_model = explicit_model  # `--model DIR`: wins until the user picks one
        # Read, not written, here: two small files (the key file is private to this user).
        self.server: ServerConfig | None = remote_config.load_saved(data_dir, repair=False)
        self.checker = ServerCheck(self)  # Settings' checks, in the thread pool
        self.devices: list[str] = []
        engine.state.connect(self._on_engine_state)
        engine.loaded.connect(self._on_loaded)
        engine.error.connect(self._on_error)
        engine.devices.connect(self._on_devices)

    def uses_server(self, settings: AppSettings) -> bool:
        """The settings ask for the saved server, and the user agreed to its address."""
        server = self.server
        return (
            settings.model_source == "server"
            and server is not None
            and (settings.consented(server.url))
        )

    def start(self) -> None:
        """At start-up: the server's model, or this computer's (the first-run panel when
        there is none)."""
        if self.uses_server(self._parts.settings()):
            self.connect_server()
        else:
            self.load_choice()

    def load_choice(self) -> None:
        """This computer's model: the one given or chosen, else the first usable one."""
        settings = self._parts.settings()
        choice = choose_model(self._data_dir, self.explicit_model, settings.model_dir)
        if choice.folder is None:
            self.show_first_run(choice.problem)
        else:
            self.load_local(str(choice.folder))

    @Slot(str)
    def offer(self, folder: str) -> None:
        """A second `desklens gui --model DIR` handed its folder over: another model than this
        one is asked about here, not loaded behind the user's back (nor in a second app)."""
        source = self._engine.status.source
        if isinstance(source, LocalModel) and Path(folder) == Path(source.folder):
            return
        self._parts.notice.show_message(
            f"DeskLens was started again with --model {folder}. Switch to that model? "
            "(This chat stays open.)",
            action=("Switch", lambda: self.switch_to(folder)),
        )

    def switch_to(self, folder: str) -> None:
        self.explicit_model = folder  # as if given with --model: until the user picks one
        self.load_local(folder)

    def load_local(self, folder: str) -> None:
        self._page.show_first_run(False)
        self._parts.status.set_model(Path(folder).name)
        self._parts.status.set_state("loading")
        self._engine.load(folder, self._parts.settings().engine_options())

    @property
    def precisions(self) -> str:
        """The precisions the loaded local model measured on this CPU ("" for none)."""
        model = self._engine.status.model
        return model.precisions if model is not None and not model.server else ""

    def measure_again(self) -> None:
        """Reloads the loaded local model, measuring its precisions on this CPU again."""
        model = self._engine.status.model
        if model is None or model.folder is None:
            return
        self._parts.status.set_state("loading")
        options = replace(self._parts.settings().engine_options(), measure_again=True)
        self._engine.load(str(model.folder), options)

    def connect_server(self) -> None:
        server = self.server
        assert server is not None
        self._page.show_first_run(False)  # a server's user needs no model here
        self._parts.status.set_model(server.model, server=server.host)
        self._parts.status.set_state("loading", self._connecting_text())
        self._engine.load_remote(server)

    def show_first_run(self, problem: str | None) -> None:
        if problem:
            self._page.first_run.show_problem(problem)
        else:
            self._page.first_run.show_intro()
        self._page.show_first_run(True)
        self._parts.status.set_model("")
        self._parts.status.set_state("error" if problem else "no model")

    def apply(self, old: AppSettings, new: AppSettings, server: ServerConfig | None) -> None:
        """The settings changed (`server`: the one chosen in the dialog, None if none was):
        saves the server on the storage thread and loads what now answers."""
        changed = server is not None and server != self.server
        if server is not None and changed:
            self.server = server
            folder = self._data_dir
            self._storage.submit(lambda: remote_config.save(folder, server))
        if new.model_dir != old.model_dir:  # the user picked another model: it wins
            self.explicit_model = None
        status = self._engine.status
        on_server = isinstance(status.source, ServerModel)
        if self.uses_server(new):
            if not on_server or changed or not status.loaded:  # or once more
                self.connect_server()
        elif on_server or (new.model_dir, new.engine_options()) != (
            old.model_dir,
            old.engine_options(),
        ):
            self.load_choice()

    @Slot()
    def use_local(self) -> None:
        """Back to this computer's model (the server stays saved for later)."""
        self._apply(replace(self._parts.settings(), model_source="local"))

    @Slot(object)
    def on_answer_shown(self, result: AskResult) -> None:
        """An answer the server failed (or could not be asked for): offer this computer's."""
        answer, status = result.answer, self._engine.status
        if answer.ok or not isinstance(status.source, ServerModel):
            return
        if not (answer.stats.server or not status.loaded):
            return  # not the server's fault (an image that cannot be read)
        host = self.server.host if self.server is not None else "the server"
        if self._has_local_model():
            self._parts.notice.show_message(
                f"The answer from {host} failed; this computer's model can answer instead.",
                error=True,
                action=(USE_LOCAL, self.use_local),
            )

    # --- internals -----------------------------------------------------------------------

    def _connecting_text(self) -> str:
        return f"Connecting to {self.server.host}…" if self.server is not None else ""

    def _has_local_model(self) -> bool:
        saved = self._parts.settings().model_dir
        return choose_model(self._data_dir, self.explicit_model, saved).folder is not None

    @Slot(object)
    def _on_loaded(self, info: ModelInfo) -> None:
        self._page.show_first_run(False)
        if info.server:
            self._parts.status.set_model(info.name, server=info.server)
        else:
            self._parts.status.set_model(info.name, info.device, info.weight_format)
        self._parts.status.set_state("ready")

    @Slot(str)
    def _on_error(self, message: str) -> None:
        if not isinstance(self._engine.status.source, ServerModel):
            self.show_first_run(message)
            self._parts.notice.show_message(message, error=True)
            return
        # The app stays usable: the chats, the OCR, and this computer's model if there is one.
        status = self._parts.status
        status.set_state("error", "Not connected", tip=message)
        status.set_model(message)
        local = self._has_local_model()
        self._parts.notice.show_message(
            message if local else f"{message} The text extraction still works.",
            error=True,
            action=(USE_LOCAL, self.use_local) if local else None,
            persistent=True,
        )

    @Slot(list)
    def _on_devices(self, devices: list) -> None:
        self.devices = list(devices)

    @Slot(str)
    def _on_engine_state(self, state: str) -> None:
        if state == "ready" and self._parts.composer.generating:
            return  # the engine ended something else (a preparation, an API request): Stop shows
        if state == "loading" and isinstance(self._engine.status.source, ServerModel):
            self._parts.status.set_state("loading", self._connecting_text())
        elif state != "error":  # errors arrive with their message through _on_error
            self._parts.status.set_state(state)
