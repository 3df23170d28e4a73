"""Settings > My prompts: create, edit, reorder and remove the user's presets, set the system
prompt, export and import them as a JSON file. The dialog edits a copy; OK hands the checked
`PresetBook` to `OwnPresetsFlow.replace`, which saves it on the storage thread."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.core.user_presets import (
    MAX_ANSWER_TOKENS,
    PresetBook,
    PresetDraft,
    PresetError,
    UserPreset,
    check_names,
    read_book,
    write_book,
)
from desktop.gui.flows.own_presets import OwnPresetsFlow
from desktop.gui.flows.save_as import SAVE_FOLDER
from desktop.gui.lifetimes import run_dialog
from desktop.gui.widgets.basics import ok_cancel_buttons, push_button
from desktop.gui.workers.storage_worker import StorageController

JSON_FILTER = "DeskLens prompts (*.json)"


def draft_of(preset: UserPreset) -> PresetDraft:
    import json

    schema = json.dumps(preset.json_schema, indent=2) if preset.json_schema is not None else ""
    return PresetDraft(preset.name, preset.prompt, preset.max_new_tokens or 0, schema)


class PresetsEditor(QDialog):
    def __init__(
        self, book: PresetBook, storage: StorageController, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._storage = storage  # the export is written there, like every other file
        self.setWindowTitle("My prompts")
        self.setMinimumSize(640, 480)
        self.drafts = [draft_of(p) for p in book.presets]
        self._current = -1
        layout = QVBoxLayout(self)
        columns = QHBoxLayout()
        side = QVBoxLayout()
        self.list = QListWidget()
        self.list.setAccessibleName("Your prompts")
        self.list.currentRowChanged.connect(self._select)
        side.addWidget(self.list, 1)
        buttons = QHBoxLayout()
        for label, slot in (
            ("Add", self.add),
            ("Remove", self.remove),
            ("Up", lambda: self.move_selected(-1)),
            ("Down", lambda: self.move_selected(1)),
        ):
            button = push_button(label)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        side.addLayout(buttons)
        columns.addLayout(side, 2)

        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setAccessibleName("Name")
        self.name_edit.textEdited.connect(self._rename_item)
        self.prompt_edit = QPlainTextEdit()
        self.prompt_edit.setAccessibleName("Prompt")
        self.length_spin = QSpinBox()
        self.length_spin.setRange(0, MAX_ANSWER_TOKENS)
        self.length_spin.setSingleStep(256)
        self.length_spin.setSpecialValueText("The app's setting")
        self.length_spin.setSuffix(" tokens")
        self.schema_edit = QPlainTextEdit()
        self.schema_edit.setPlaceholderText('Optional, e.g. {"type": "object", ...}')
        self.schema_edit.setAccessibleName("JSON schema")
        form.addRow("Name", self.name_edit)
        form.addRow("Prompt", self.prompt_edit)
        form.addRow("Answer length", self.length_spin)
        form.addRow("JSON schema", self.schema_edit)
        columns.addLayout(form, 3)
        layout.addLayout(columns, 1)

        self.system_edit = QPlainTextEdit(book.system_prompt)
        self.system_edit.setAccessibleName("System prompt")
        self.system_edit.setPlaceholderText("Optional: opens the first question of every new chat")
        self.system_edit.setFixedHeight(70)
        layout.addWidget(QLabel("System prompt"))
        layout.addWidget(self.system_edit)
        self.problem = QLabel()
        self.problem.setObjectName("errorText")
        self.problem.setWordWrap(True)
        layout.addWidget(self.problem)

        bottom = QHBoxLayout()
        for label, slot in (("Import…", self.import_file), ("Export…", self.export_file)):
            button = push_button(label)
            button.clicked.connect(slot)
            bottom.addWidget(button)
        box = ok_cancel_buttons(self)
        bottom.addStretch(1)
        bottom.addWidget(box)
        layout.addLayout(bottom)
        self._fill_list(0)

    # --- editing -------------------------------------------------------------------------

    def add(self) -> None:
        self._keep_current()
        self.drafts.append(PresetDraft(name=f"My prompt {len(self.drafts) + 1}"))
        self._fill_list(len(self.drafts) - 1)
        self.name_edit.setFocus()
        self.name_edit.selectAll()

    def remove(self) -> None:
        row = self.list.currentRow()
        if row >= 0:
            del self.drafts[row]
            self._current = -1
            self._fill_list(min(row, len(self.drafts) - 1))

    def move_selected(self, step: int) -> None:
        row = self.list.currentRow()
        if 0 <= row + step < len(self.drafts) and row >= 0:
            self._keep_current()
            self.drafts[row], self.drafts[row + step] = self.drafts[row + step], self.drafts[row]
            self._fill_list(row + step)

    def result_book(self) -> PresetBook:
        """The checked presets; PresetError (one sentence) when one is not usable."""
        self._keep_current()
        presets = [d.checked(f'The prompt "{d.name or "(no name)"}"') for d in self.drafts]
        check_names(presets, "My prompts")
        return PresetBook(tuple(presets), self.system_edit.toPlainText().strip())

    def accept(self) -> None:
        try:
            self.book = self.result_book()
        except PresetError as exc:
            self.problem.setText(str(exc))
            return
        super().accept()

    # --- files ---------------------------------------------------------------------------

    def import_file(self, path: str | None = None) -> None:
        """Adds the presets of an exported file (same names are replaced)."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Import prompts", "", JSON_FILTER)
            if not path:
                return
        try:
            imported = read_book(path)
        except (OSError, PresetError) as exc:
            said = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.problem.setText(said)
            return
        self._keep_current()
        names = {p.name.casefold() for p in imported.presets}
        self.drafts = [d for d in self.drafts if d.name.casefold() not in names]
        self.drafts += [draft_of(p) for p in imported.presets]
        if imported.system_prompt and not self.system_edit.toPlainText().strip():
            self.system_edit.setPlainText(imported.system_prompt)
        self.problem.setText(f"Imported {len(imported.presets)} prompts from {Path(path).name}.")
        self._fill_list(len(self.drafts) - 1)

    def export_file(self, path: str | None = None) -> None:
        try:
            book = self.result_book()
        except PresetError as exc:
            self.problem.setText(str(exc))
            return
        if path is None:
            start = SAVE_FOLDER.start("desklens-prompts.json")
            path, _ = QFileDialog.getSaveFileName(self, "Export prompts", start, JSON_FILTER)
            if not path:
                return
            SAVE_FOLDER.remember(Path(path))
        target = Path(path)
        self._storage.submit(
            lambda: write_book(target, book),
            on_done=lambda _p: self.problem.setText(
                f"Exported {len(book.presets)} prompts to {target.name}."
            ),
            on_error=self.problem.setText,
        )

    # --- internals -----------------------------------------------------------------------

    def _fill_list(self, select: int) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        self.list.addItems([d.name or "(no name)" for d in self.drafts])
        self.list.blockSignals(False)
        self._current = -1
        has_any = bool(self.drafts)
        for widget in (self.name_edit, self.prompt_edit, self.length_spin, self.schema_edit):
            widget.setEnabled(has_any)
        if has_any:
            self.list.setCurrentRow(max(0, select))
        else:
            self._load(PresetDraft())

    def _select(self, row: int) -> None:
        self._keep_current()
        self._current = row
        if 0 <= row < len(self.drafts):
            self._load(self.drafts[row])

    def _load(self, draft: PresetDraft) -> None:
        self.name_edit.setText(draft.name)
        self.prompt_edit.setPlainText(draft.prompt)
        self.length_spin.setValue(draft.max_new_tokens)
        self.schema_edit.setPlainText(draft.schema_text)

    def _keep_current(self) -> None:
        if 0 <= self._current < len(self.drafts):
            self.drafts[self._current] = PresetDraft(
                self.name_edit.text().strip(),
                self.prompt_edit.toPlainText(),
                self.length_spin.value(),
                self.schema_edit.toPlainText(),
            )

    def _rename_item(self, text: str) -> None:
        item = self.list.currentItem()
        if item is not None:
            item.setText(text or "(no name)")


class PresetsRow(QWidget):
    """The Settings row: how many prompts, and Edit… (saved when the editor's OK is pressed)."""

    def __init__(self, flow: OwnPresetsFlow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._flow = flow
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.label.setObjectName("muted")
        row.addWidget(self.label, 1)
        edit = push_button("Edit…", tooltip="Create, edit, reorder or remove your prompts")
        edit.setAccessibleName("Edit my prompts")  # two rows of Settings have an Edit…
        edit.clicked.connect(self.open_editor)
        row.addWidget(edit)
        self._show_count()

    def open_editor(self) -> None:
        editor = PresetsEditor(self._flow.book, self._flow.storage, self)
        if run_dialog(editor):
            self._flow.replace(editor.book)
            self._show_count()

    def _show_count(self) -> None:
        count = len(self._flow.book.presets)
        self.label.setText(f"{count} of your own" if count else "None yet")
