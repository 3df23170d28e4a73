"""The main window: wires the sidebar, chat, composer and panels to the two workers.

The window owns no long work: questions go to `EngineController`, extractions to
`OcrController`, file decoding to `Intake`; their results come back by signals.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QMimeData, Qt, QThreadPool, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop import APP_NAME
from desktop.core.model_registry import choose_model
from desktop.core.paths import models_dir
from desktop.core.history import HistoryError, HistoryStore
from desktop.gui.asking import AskFlow
from desktop.gui.chat_view import COLUMN_MAX_WIDTH, ChatView
from desktop.gui.composer import Composer
from desktop.gui.drop import DropHandler, choose_files
from desktop.gui.extraction import ExtractionFlow
from desktop.gui.first_run import FirstRunPanel
from desktop.gui.history_view import message_widgets
from desktop.gui.icons import app_icon, line_icon
from desktop.gui.image_ref import ImageRef
from desktop.gui.image_viewer import ImageViewer
from desktop.gui.intake import Intake, IntakeRequest, IntakeResult, request_from_mime
from desktop.gui.local_api import window_local_api
from desktop.gui.messages import (
    ChatActions,
)
from desktop.gui.notice import Notice
from desktop.gui.ocr_worker import OcrController
from desktop.gui.preparing import PrepareFlow
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.settings_dialog import SettingsDialog
from desktop.gui.sidebar import Sidebar
from desktop.gui.status import StatusBar
from desktop.gui.theme import apply_theme, current_theme
from desktop.gui.widgets import push_button
from desktop.gui.worker import EngineController

logger = logging.getLogger(__name__)

TITLE_CHARS = 48
SHUTDOWN_TIMEOUT_MS = 10_000


def _title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _centred(widget: QWidget, margins: tuple[int, int, int, int]) -> QWidget:
    """`widget` in a row that keeps it as wide as the chat column, centred."""
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(*margins)
    widget.setMaximumWidth(COLUMN_MAX_WIDTH)
    row.addStretch(1)
    row.addWidget(widget, 100)
    row.addStretch(1)
    return holder


class MainWindow(QMainWindow):
    def __init__(
        self,
        data_dir: Path,
        store: HistoryStore,
        settings_store: SettingsStore,
        settings: AppSettings,
        model_dir: str | None = None,
    ) -> None:
        super().__init__()
        self.data_dir = data_dir
        self.store = store
        self.settings_store = settings_store
        self.settings = settings
        self._explicit_model = model_dir
        self.conversation_id: int | None = None
        self._devices: list[str] = []
        self._closed = False
        self.model_loaded = False

        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(app_icon())
        self.setMinimumSize(760, 520)
        self.engine = EngineController(store, self)
        self.ocr = OcrController(store, self)
        self.local_api = window_local_api(self.engine, self.ocr, data_dir, self)
        self.local_api.apply(settings)  # off by default
        self.intake = Intake(self)
        self.actions_hub = ChatActions(self)
        self._build()
        self.asking = AskFlow(self)
        self.extraction = ExtractionFlow(self)
        self._connect()
        self.preparing = PrepareFlow(self)  # after _connect: its slots see the window updated
        self._restore_geometry()
        self.sidebar.refresh()
        self.extraction.update_button()

    # --- construction --------------------------------------------------------------------

    def _build(self) -> None:
        self.sidebar = Sidebar(self.store)
        page = QWidget()
        page.setObjectName("chatPage")
        column = QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)

        header = QWidget()
        header_row = QHBoxLayout(header)
        header_row.setContentsMargins(20, 10, 16, 6)
        self.title_label = QLabel("New chat")
        self.title_label.setObjectName("sidebarTitle")
        header_row.addWidget(self.title_label, 1)
        self.extract_all_button = push_button(
            "Extract text from all", tooltip="Read the text of every attached image (Ctrl+E)"
        )
        self.settings_button = push_button("Settings", tooltip="Settings (Ctrl+,)")
        header_row.addWidget(self.extract_all_button)
        header_row.addWidget(self.settings_button)
        column.addWidget(header)

        self.first_run = FirstRunPanel(models_dir(self.data_dir))
        self.first_run_holder = _centred(self.first_run, (20, 6, 20, 6))
        self.first_run_holder.hide()
        column.addWidget(self.first_run_holder)
        self.chat = ChatView()
        column.addWidget(self.chat, 1)
        self.notice = Notice()
        column.addWidget(_centred(self.notice, (20, 0, 20, 6)))
        self.composer = Composer()
        column.addWidget(_centred(self.composer, (20, 0, 20, 14)))

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(page)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([250, 950])
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setHandleWidth(1)
        self.setCentralWidget(self.splitter)
        self.status = StatusBar()
        self.setStatusBar(self.status)
        self.drop = DropHandler(self)
        self._refresh_icons()

    def _connect(self) -> None:
        engine = self.engine.worker
        engine.state.connect(self._on_engine_state)
        engine.loaded.connect(self._on_model_loaded)
        engine.error.connect(self._on_model_error)
        engine.devices.connect(self._on_devices)
        self.intake.loaded.connect(self._on_intake)
        self.drop.dropped.connect(self.intake.submit)
        self.ocr.worker.open_requested.connect(self.open_files)
        self.composer.attach_requested.connect(self.attach_files)
        self.composer.mime_pasted.connect(self.paste_mime)
        self.composer.view_requested.connect(self.view_image)
        self.actions_hub.view_image.connect(self.view_image)
        self.sidebar.conversation_selected.connect(self.open_conversation)
        self.sidebar.renamed.connect(
            lambda cid, title: self._show_title(title) if cid == self.conversation_id else None
        )
        self.sidebar.deleted.connect(self._on_deleted)
        self.sidebar.purged.connect(self.engine.forget)
        self.sidebar.problem.connect(lambda text: self.notice.show_message(text, error=True))
        self.settings_button.clicked.connect(self.open_settings)
        self.first_run.model_ready.connect(self._on_model_converted)
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_scheme_changed)
        for keys, slot, name in (
            ("Ctrl+N", lambda: self.sidebar.select(None), "New chat"),
            ("Ctrl+L", self.composer.focus_editor, "Focus the question box"),
            ("Ctrl+Shift+C", self.asking.copy_last_answer, "Copy the last answer"),
            ("Ctrl+O", self.attach_files, "Attach files"),
            ("Ctrl+E", self.extraction.extract_all, "Extract text from all"),
            ("Ctrl+,", self.open_settings, "Settings"),
            (QKeySequence.StandardKey.Paste, self.paste_clipboard, "Paste an image"),
        ):
            shortcut = QShortcut(QKeySequence(keys), self, slot)
            shortcut.setWhatsThis(name)

    # --- start-up and the model ------------------------------------------------------------

    def start_background_work(self) -> None:
        """Loads the model and compiles the OCR in their threads; the window is usable now."""
        self.ocr.warm_up()
        choice = choose_model(self.data_dir, self._explicit_model, self.settings.model_dir)
        if choice.folder is None:
            self._show_first_run(choice.problem)
            return
        self.load_model(str(choice.folder))

    def load_model(self, folder: str) -> None:
        self.model_loaded = False
        self.first_run_holder.hide()
        self.status.set_model(Path(folder).name)
        self.status.set_state("loading")
        self.engine.load(folder, self.settings.engine_options())

    def _show_first_run(self, problem: str | None) -> None:
        if problem:
            self.first_run.show_problem(problem)
        else:
            self.first_run.show_intro()
        self.first_run_holder.show()
        self.status.set_model("")
        self.status.set_state("error" if problem else "no model")

    @Slot(object)
    def _on_model_loaded(self, info) -> None:
        self.model_loaded = True
        self.first_run_holder.hide()
        self.status.set_model(info.name, info.device, info.weight_format)
        self.status.set_state("ready")

    @Slot(str)
    def _on_model_error(self, message: str) -> None:
        self.model_loaded = False
        self._show_first_run(message)
        self.notice.show_message(message, error=True)

    @Slot(list)
    def _on_devices(self, devices: list) -> None:
        self._devices = list(devices)

    @Slot(str)
    def _on_model_converted(self, folder: str) -> None:
        self.settings.model_dir = folder
        self.settings_store.save(self.settings)
        self.load_model(folder)

    @Slot(str)
    def _on_engine_state(self, state: str) -> None:
        if state != "error":  # errors arrive with their message through _on_model_error
            self.status.set_state(state)

    # --- conversations ---------------------------------------------------------------------

    @Slot(object)
    def open_conversation(self, conversation_id: int | None) -> None:
        self.asking.detach()
        self.conversation_id = conversation_id
        self.chat.clear()
        self._show_title(self._title_of(conversation_id))
        if conversation_id is None:
            self.extraction.update_button()
            self.composer.focus_editor()
            return
        try:
            messages = self.store.messages(conversation_id)
        except HistoryError as exc:
            self.notice.show_message(str(exc), error=True)
            return
        settings = self.asking.generation_settings()
        for widget in message_widgets(messages, self.actions_hub, settings):
            self.chat.add(widget)
        self.extraction.update_button()

    def _show_title(self, title: str) -> None:
        self.title_label.setText(title)
        self.setWindowTitle(f"{title} — {APP_NAME}" if title else APP_NAME)

    def _title_of(self, conversation_id: int | None) -> str:
        if conversation_id is None:
            return "New chat"
        try:
            summaries = self.store.list_conversations()
        except HistoryError:
            return ""
        return next((s.title for s in summaries if s.id == conversation_id), "")

    def ensure_conversation(self, title: str) -> int | None:
        """The open conversation, created (titled `title`) on its first message."""
        if self.conversation_id is not None:
            return self.conversation_id
        try:
            self.conversation_id = self.store.create_conversation(_title_from(title))
        except HistoryError as exc:
            self.notice.show_message(str(exc), error=True)
            return None
        self.sidebar.mark_current(self.conversation_id)
        self._show_title(self._title_of(self.conversation_id))
        return self.conversation_id

    @Slot(int, str)
    def _on_deleted(self, _conversation_id: int, title: str) -> None:
        self.notice.show_message(
            f'Deleted "{title}".',
            action=("Undo", self.sidebar.undo_delete),
            on_dismiss=self.sidebar.purge_pending,
        )

    # --- images and text extraction --------------------------------------------------------

    @Slot()
    def attach_files(self) -> None:
        self.intake.submit(choose_files(self))

    @Slot(list)
    def open_files(self, paths: list) -> None:
        """Files from the command line or "Open with": attached as if dropped, and the
        window comes to the front (when another `desklens FILE` handed them over)."""
        self.intake.submit(IntakeRequest(paths=[Path(path) for path in paths]))
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()

    @Slot(QMimeData)
    def paste_mime(self, mime: QMimeData) -> None:
        self.intake.submit(request_from_mime(mime, pasted=True))

    @Slot()
    def paste_clipboard(self) -> None:
        mime = QGuiApplication.clipboard().mimeData()
        if mime is not None:
            self.paste_mime(mime)

    @Slot(object)
    def _on_intake(self, result: IntakeResult) -> None:
        if result.images:
            self.composer.add_images(result.images)
            self.composer.focus_editor()
        messages = result.messages()
        if messages:
            self.notice.show_message(" ".join(messages), error=not result.images)

    @Slot(object)
    def view_image(self, ref: ImageRef) -> None:
        viewer = ImageViewer(ref, self)
        viewer.extract_requested.connect(lambda ref: self.extraction.extract_text([ref]))
        viewer.show()

    # --- settings, theme, window state -----------------------------------------------------

    @Slot()
    def open_settings(self) -> None:
        dialog = SettingsDialog(self.settings, self._devices, self, self.local_api)
        if dialog.exec():
            self.apply_settings(dialog.result_settings())

    def apply_settings(self, new: AppSettings) -> None:
        old, self.settings = self.settings, new
        self.local_api.apply(new)
        self.settings_store.save(new)
        if (new.theme, new.font_size) != (old.theme, old.font_size):
            apply_theme(QGuiApplication.instance(), new.theme, new.font_size)
            self._refresh_icons()
        self.preparing.update()  # reading ahead may have been turned on or off
        if new.model_dir != old.model_dir:  # the user picked another model: it wins
            self._explicit_model = None
        if (new.model_dir, new.engine_options()) != (old.model_dir, old.engine_options()):
            choice = choose_model(self.data_dir, self._explicit_model, new.model_dir)
            if choice.folder is None:
                self._show_first_run(choice.problem)
            else:
                self.load_model(str(choice.folder))

    @Slot()
    def _on_system_scheme_changed(self, *_args) -> None:
        if self.settings.theme == "system":
            apply_theme(QGuiApplication.instance(), "system", self.settings.font_size)
            self._refresh_icons()

    def _refresh_icons(self) -> None:
        theme = current_theme()
        self.composer.refresh_icons()
        self.sidebar.refresh_icons()
        self.extract_all_button.setIcon(line_icon("text", theme.text))

    def _restore_geometry(self) -> None:
        geometry = self.settings_store.window_state("geometry")
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1200, 780)
        splitter = self.settings_store.window_state("splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stops the answer and the OCR, waits for both threads, then closes the history."""
        if not self._closed:
            self._closed = True
            self.settings_store.set_window_state("geometry", self.saveGeometry())
            self.settings_store.set_window_state("splitter", self.splitter.saveState())
            self.hide()  # closed for the user even while a model compile finishes below
            self.sidebar.purge_pending()
            self.first_run.kill()
            self.ocr.cancel_all()
            self.local_api.stop()  # before the engine's thread ends: its jobs stop first
            for worker in (self.engine, self.ocr):
                if not worker.shutdown(SHUTDOWN_TIMEOUT_MS):
                    # Compiling a model cannot be interrupted; a QThread destroyed while it
                    # runs would abort the process, so wait for it.
                    logger.warning("waiting for %s to finish", worker.thread.objectName())
                    worker.thread.wait()
                worker.release()  # models and their threads go now, not at interpreter exit
            QThreadPool.globalInstance().waitForDone()  # image intake tasks
            self.store.close()
        super().closeEvent(event)
