"""The user's own prompts in the app: read from `presets.json` at start, shown as composer
chips beside the built-in presets, replaced from the editor (Settings > My prompts) and
saved on the storage thread."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from desktop.core.user_presets import PresetBook, load_book, presets_path, write_book
from desktop.gui.flows.asking import AskFlow, ChatParts


class OwnPresetsFlow(QObject):
    changed = Signal(PresetBook)  # once shown (saving follows on the storage thread)

    def __init__(self, parts: ChatParts, asking: AskFlow, data_dir: Path, parent: QObject) -> None:
        super().__init__(parent)
        self._parts = parts
        self._asking = asking
        self.path = presets_path(data_dir)
        self.storage = parts.session.storage
        loaded = load_book(data_dir)  # a short read: the GUI thread only reads
        if loaded.problem:
            parts.notice.show_message(loaded.problem, error=True)
        self.book = loaded.book
        self._show(self.book)

    def replace(self, book: PresetBook) -> None:
        self._show(book)
        path = self.path
        self.storage.submit(lambda: write_book(path, book))

    def _show(self, book: PresetBook) -> None:
        self.book = book
        self._asking.preset_book = book
        self._parts.composer.set_own_presets([p.as_preset() for p in book.presets])
        self.changed.emit(book)
