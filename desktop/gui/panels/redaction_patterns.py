"""Settings > Redaction: the user's own patterns (one regular expression a line), redacted as
`[custom]` beside e-mails, IBANs, card and phone numbers; the same list `desklens redact`
reads (`<data dir>/redaction.json`, core/privacy/user_patterns.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from desktop.core.privacy.patterns import PatternError
from desktop.core.privacy.user_patterns import check_patterns
from desktop.gui.widgets.basics import ok_cancel_buttons, push_button

if TYPE_CHECKING:
    from desktop.gui.flows.redacting import RedactFlow


class PatternsEditor(QDialog):
    """OK checks every line; a bad pattern is named under the list and the dialog stays."""

    def __init__(self, sources: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Your redaction patterns")
        self.setMinimumWidth(480)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Besides e-mail addresses, IBANs, card and phone numbers, redact what these "
            "regular expressions match, one a line (for example  Project \\w+  or  "
            "[A-Z]{2}-\\d{6} ). Matches are filled on the picture and tagged [custom]."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.edit = QPlainTextEdit("\n".join(sources))
        self.edit.setAccessibleName("Redaction patterns, one a line")
        layout.addWidget(self.edit, 1)
        self.problem = QLabel()
        self.problem.setObjectName("error")
        self.problem.setWordWrap(True)
        self.problem.hide()
        layout.addWidget(self.problem)
        layout.addWidget(ok_cancel_buttons(self))

    def sources(self) -> list[str]:
        return [line.strip() for line in self.edit.toPlainText().splitlines() if line.strip()]

    def accept(self) -> None:
        try:
            check_patterns(self.sources())
        except PatternError as exc:
            self.problem.setText(str(exc))
            self.problem.show()
            return
        super().accept()


class PatternsRow(QWidget):
    """The Settings row: how many patterns, and Edit… (saved when the editor's OK is pressed)."""

    def __init__(self, flow: RedactFlow, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._flow = flow
        self.editor: PatternsEditor | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        self.label = QLabel()
        self.label.setObjectName("muted")
        row.addWidget(self.label, 1)
        edit = push_button("Edit…", tooltip="Your own patterns to redact before sending")
        edit.setAccessibleName("Edit redaction patterns")  # two rows of Settings have an Edit…
        edit.clicked.connect(self.open_editor)
        row.addWidget(edit)
        self._show_count()

    def open_editor(self) -> None:
        self.editor = PatternsEditor(self._flow.sources, self)
        self.editor.accepted.connect(lambda: self._save(self.editor))
        self.editor.open()

    def _save(self, editor: PatternsEditor | None) -> None:
        if editor is not None:
            self._flow.save_patterns(editor.sources())
            self._show_count()

    def _show_count(self) -> None:
        count = len(self._flow.sources)
        self.label.setText(
            f"{count} pattern{'s' if count != 1 else ''} of your own"
            if count
            else "E-mails, IBANs, cards, phones"
        )
