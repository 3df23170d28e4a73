"""User preferences, kept in an INI file inside the data folder (QSettings).

An INI file in the data folder (rather than the registry or ~/.config) keeps everything DeskLens
writes in one place, which `--data-dir` and the tests can redirect.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from desktop.core.api import DEFAULT_PORT
from desktop.gui.tray.keys import DEFAULT_SHORTCUT

SETTINGS_FILE = "settings.ini"
THEMES = ("system", "light", "dark")
DEVICES = ("CPU", "GPU", "NPU", "AUTO")
CAPTURE_ACTIONS = ("copy", "ask")
MODEL_SOURCES = ("local", "server")

# Visual tokens per image (one token = 32x32 px): the speed <-> detail trade-off. 1280 is the
# engine's default (a 1280x720 screenshot at full resolution).
DETAIL_LEVELS = (256, 512, 768, 1280, 2048, 3072, 4096)
DEFAULT_DETAIL = 1280


@dataclass
class AppSettings:
    model_dir: str = ""  # empty: the first usable converted model found
    device: str = "CPU"
    max_visual_tokens: int = DEFAULT_DETAIL
    max_new_tokens: int = 1024
    theme: str = "system"
    font_size: int = 0  # points; 0 keeps the system's size
    # Read attached images (and a reopened chat) while the question is typed; off saves
    # battery, at the cost of a slower first answer.
    prepare_ahead: bool = True
    # Leave out image blocks that repeat a neighbour pixel for pixel (engine/pruning.py).
    skip_repeats: bool = True
    # An OpenAI-compatible server for this computer's programs (desktop/gui/workers/local_api.py).
    local_api: bool = False
    local_api_port: int = DEFAULT_PORT
    # What a screen capture does without Shift (desktop/gui/flows/capturing.py): "copy" the text
    # or "ask" about the picture.
    capture_action: str = "copy"
    # The tray icon while the window is open, and the global shortcut that captures
    # (desktop/gui/tray/: `desklens tray` reads the shortcut too); "" for no shortcut.
    tray: bool = False
    global_shortcut: str = DEFAULT_SHORTCUT
    # Which model answers: "local" (this computer's) or "server" (the one in server.json, its
    # key in server.key: desktop/gui/flows/model_source.py). The servers the user agreed to
    # send questions and images to, by URL, space-separated: the key is never in this file.
    model_source: str = "local"
    consented_servers: str = ""

    def consented(self, url: str) -> bool:
        return url in self.consented_servers.split()

    def with_consent(self, url: str) -> AppSettings:
        if self.consented(url):
            return replace(self)
        return replace(self, consented_servers=" ".join([*self.consented_servers.split(), url]))

    def engine_options(self) -> EngineOptions:
        return EngineOptions(self.device, self.max_visual_tokens, self.skip_repeats)


@dataclass(frozen=True)
class EngineOptions:
    """What changing requires reloading the model (EngineConfig is built in the worker, so the
    GUI thread never imports OpenVINO)."""

    device: str
    max_visual_tokens: int
    skip_repeats: bool = True
    measure_again: bool = False  # the precisions kept for this CPU are measured again


def _parse(raw: object, default: object) -> object:
    """`raw` as read from the INI file, in the type of `default`. Booleans come back as the
    strings "true" / "false", and bool("false") is True."""
    if isinstance(default, bool):
        text = str(raw).strip().lower()
        if text not in ("true", "false", "1", "0"):
            raise ValueError(f"not a boolean: {raw!r}")
        return text in ("true", "1")
    if isinstance(default, int):
        return int(str(raw))
    if isinstance(default, float):
        return float(str(raw))
    return str(raw)


class SettingsStore:
    """Reads and writes `AppSettings` and window state in `<data dir>/settings.ini`."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / SETTINGS_FILE
        self._qsettings = self._open()

    def _open(self) -> QSettings:
        # Writes use an instance of their own (they run on the storage thread; a QSettings
        # object is not thread-safe). Instances of one file in one process share its values.
        return QSettings(str(self.path), QSettings.Format.IniFormat)

    def load(self) -> AppSettings:
        defaults = AppSettings()
        values: dict[str, Any] = {}
        for field in fields(AppSettings):
            default = getattr(defaults, field.name)
            raw = self._qsettings.value(f"app/{field.name}", default)
            try:
                values[field.name] = _parse(raw, default)
            except (TypeError, ValueError):  # a hand-edited or damaged value: use the default
                values[field.name] = default
        settings = AppSettings(**values)
        if settings.theme not in THEMES:
            settings.theme = defaults.theme
        if settings.capture_action not in CAPTURE_ACTIONS:
            settings.capture_action = defaults.capture_action
        if settings.model_source not in MODEL_SOURCES:
            settings.model_source = defaults.model_source
        settings.max_visual_tokens = max(64, settings.max_visual_tokens)
        settings.max_new_tokens = max(16, settings.max_new_tokens)
        return settings

    def save(self, settings: AppSettings) -> None:
        """Writes the settings; raises OSError when the file cannot be written."""
        qsettings = self._open()
        for field in fields(AppSettings):
            qsettings.setValue(f"app/{field.name}", getattr(settings, field.name))
        self._sync(qsettings)

    def window_state(self, key: str) -> QByteArray | None:
        value = self._qsettings.value(f"window/{key}")
        return value if isinstance(value, QByteArray) else None

    def set_window_state(self, key: str, value: QByteArray) -> None:
        qsettings = self._open()
        qsettings.setValue(f"window/{key}", value)
        self._sync(qsettings)

    def _sync(self, qsettings: QSettings) -> None:
        qsettings.sync()
        if qsettings.status() != QSettings.Status.NoError:
            raise OSError(errno.EIO, "the settings file could not be written", str(self.path))
