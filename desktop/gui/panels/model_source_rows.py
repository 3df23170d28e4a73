"""Settings' "Model" rows: this computer's model, or a model server's (its address, model name,
key, plain-http permission, and Test connection).

The address is checked, and the server asked, on a pool thread (`ServerCheck`): the dialog
never waits for the network or a name lookup. The key is a password field, filled from
server.key; it is saved by the window on the storage thread, never in settings.ini.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QSize, Qt, Signal, Slot
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QSizePolicy,
    QWidget,
)

from desktop.core.remote.config import ServerConfig
from desktop.gui.settings import AppSettings
from desktop.gui.widgets.basics import push_button
from desktop.gui.workers.server_check import ServerCheck, ServerCheckResult, connected_text

ADDRESS_EXAMPLE = "http://10.0.0.5:8000/v3"
SERVER_HELP = (
    "A model server on your network: OpenVINO Model Server, another DeskLens's `serve --api`, "
    "or any OpenAI-compatible one"
)
WHAT_LEAVES = (
    "Your questions, the images you attach and the chat so far go to this server; the text "
    "extraction (OCR) stays on this computer."
)
INSECURE_HELP = (
    "Plain http:// is allowed for this computer and private networks. Elsewhere it would send "
    "your key and images across the internet unencrypted: tick this only for a network you "
    "trust."
)


class ModelSourceRows(QObject):
    """Adds its rows to the dialog's form; `source_changed(server)` when the choice changes."""

    source_changed = Signal(bool)  # True: "A server" is chosen

    def __init__(
        self,
        form: QFormLayout,
        settings: AppSettings,
        saved: ServerConfig | None,
        checker: ServerCheck | None,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._form = form
        self._checker = checker or ServerCheck(self)
        self._checker.done.connect(self._on_checked)
        self._test_ticket: int | None = None
        self._check_ticket: int | None = None
        self._then: Callable[[ServerConfig | None], None] | None = None
        # Asks (once per address) before anything is sent there, Test connection included;
        # the dialog sets it. None: no question (the address is agreed to already).
        self.agree: Callable[[ServerConfig], bool] | None = None

        choice = QWidget()
        row = QHBoxLayout(choice)
        row.setContentsMargins(0, 0, 0, 0)
        self.local_radio = QRadioButton("This computer")
        self.server_radio = QRadioButton("A server")
        self.server_radio.setToolTip(SERVER_HELP)
        group = QButtonGroup(choice)
        for radio in (self.local_radio, self.server_radio):
            group.addButton(radio)
            row.addWidget(radio)
        row.addStretch(1)
        chosen = saved is not None and settings.model_source == "server"
        using_server = chosen and saved is not None and settings.consented(saved.url)  # agreed
        (self.server_radio if using_server else self.local_radio).setChecked(True)
        form.addRow("Model", choice)

        self.url_edit = QLineEdit(saved.url if saved else "")
        self.url_edit.setPlaceholderText(ADDRESS_EXAMPLE)
        self.url_edit.setAccessibleName("Server address")
        self.model_edit = QLineEdit(saved.model if saved else "")
        self.model_edit.setPlaceholderText("The server's first model")
        self.model_edit.setAccessibleName("Server model")
        self.key_edit = QLineEdit(saved.api_key if saved else "")
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("None (an open server)")
        self.key_edit.setAccessibleName("Server key")
        self.insecure_check = QCheckBox("Allow plain http to a public address")
        self.insecure_check.setToolTip(INSECURE_HELP)
        self.insecure_check.setChecked(bool(saved and saved.insecure))
        self.test_button = push_button("Test connection", tooltip="Ask the server for its models")
        self.test_button.clicked.connect(self.test)
        tester = QWidget()  # the button at its own width
        test_row = QHBoxLayout(tester)
        test_row.setContentsMargins(0, 0, 0, 0)
        test_row.addWidget(self.test_button)
        test_row.addStretch(1)
        self.result_label = FormLabel("", "muted")
        self.result_label.setAccessibleName("Connection test result")
        note = FormLabel(WHAT_LEAVES, "muted")
        self._fields: list[QWidget] = [self.url_edit, self.model_edit, self.key_edit]
        self._fields += [self.insecure_check, tester, self.result_label, note]
        labels = ("Server", "Server model", "Key", "", "", "", "")
        for label, field in zip(labels, self._fields, strict=True):
            form.addRow(label, field)
        for edit in (self.url_edit, self.model_edit, self.key_edit):
            edit.textEdited.connect(self._forget_result)
        self.insecure_check.toggled.connect(self._forget_result)
        self.server_radio.toggled.connect(self._show_source)
        self._show_source(self.server_radio.isChecked())

    @property
    def wants_server(self) -> bool:
        return self.server_radio.isChecked()

    @property
    def busy(self) -> bool:
        """A check for OK is under way (its answer decides whether the dialog closes)."""
        return self._check_ticket is not None

    def typed_config(self) -> ServerConfig:
        return ServerConfig(
            self.url_edit.text().strip(),
            self.key_edit.text().strip(),
            self.model_edit.text().strip(),
            self.insecure_check.isChecked(),
        )

    @Slot()
    def test(self) -> None:
        """Test connection: the address checked here, then (once the user agreed to send to
        it) the server's models, or why it cannot be used."""
        self._test_ticket = self._checker.submit(self.typed_config(), ask_models=False)
        self.show_result("Checking the address…")
        self._set_testing(True)

    def check(self, then: Callable[[ServerConfig | None], None]) -> None:
        """Checks the address (no request to the server); `then(config)`, with None when
        it cannot be used (the sentence is shown)."""
        self._then = then
        self._check_ticket = self._checker.submit(self.typed_config(), ask_models=False)
        self.show_result("Checking the address…")

    def cancel(self) -> None:
        """The dialog closes: answers still on their way are ignored."""
        self._test_ticket = self._check_ticket = self._then = None

    def show_result(self, text: str, *, error: bool = False) -> None:
        label = self.result_label
        label.setText(text)
        self._form.setRowVisible(label, bool(text) and self.wants_server)
        label.setObjectName("errorText" if error else "muted")
        label.style().unpolish(label)
        label.style().polish(label)

    # --- internals -----------------------------------------------------------------------

    @Slot(object)
    def _on_checked(self, result: ServerCheckResult) -> None:
        if result.ticket == self._test_ticket:
            self._test_ticket = None
            config = result.config
            if config is not None and result.models is None and result.error is None:
                if self.agree is not None and not self.agree(config):
                    self._set_testing(False)
                    self.show_result(f"Not tested: nothing was sent to {config.host}.")
                    return
                self._test_ticket = self._checker.submit(config, ask_models=True)
                self.show_result("Connecting…")
                return
            self._set_testing(False)
            if config is None or result.models is None:
                self.show_result(result.error or "The server could not be checked.", error=True)
            else:
                text = connected_text(config, result.models) + self._added_path(config)
                self.show_result(text, error=not text.startswith("Connected:"))
        elif result.ticket == self._check_ticket:
            then, self._then, self._check_ticket = self._then, None, None
            if result.config is None:
                self.show_result(result.error or "The address cannot be used.", error=True)
            else:
                self.show_result("")
            if then is not None:
                then(result.config)

    def _set_testing(self, testing: bool) -> None:
        """Disables the button while a test runs. Qt hands a disabled widget's focus to the
        next field (Max answer length): the result line holds it meanwhile (a screen reader
        reads the progress there) and gives it back to the button."""
        button, label = self.test_button, self.result_label
        if testing:
            if button.hasFocus():
                label.setFocus(Qt.FocusReason.OtherFocusReason)
            button.setEnabled(False)
            return
        button.setEnabled(True)
        if label.hasFocus():
            button.setFocus(Qt.FocusReason.OtherFocusReason)

    def _added_path(self, config: ServerConfig) -> str:
        """Says so when the API's usual path was added to a bare address (never silently)."""
        typed = self.url_edit.text().strip().rstrip("/")
        if config.url.endswith("/v1") and not typed.endswith("/v1"):
            return f". The address used is {config.url}: /v1, the usual API path, was added."
        return ""

    def _forget_result(self, *_args: object) -> None:
        if self._test_ticket is None and self._check_ticket is None:
            self.show_result("")  # it was about other values

    def _show_source(self, server: bool) -> None:
        for field in self._fields:
            shown = server and (field is not self.result_label or bool(self.result_label.text()))
            self._form.setRowVisible(field, shown)
        self.source_changed.emit(server)


class FormLabel(QLabel):
    """Wrapped text in a form row as tall as its lines at the width it has: QFormLayout sizes
    rows by their size hint, which a wrapped QLabel computes for a narrow guess of its width."""

    def __init__(self, text: str, object_name: str) -> None:
        super().__init__(text)
        self.setObjectName(object_name)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if self.width() > 0 and self.text():
            return QSize(hint.width(), self.heightForWidth(self.width()))
        return hint

    def minimumSizeHint(self) -> QSize:
        return QSize(super().minimumSizeHint().width(), self.sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the rows follow the lines the new width takes
