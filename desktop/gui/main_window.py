"""The main window: builds the sidebar, chat, composer and panels, and wires them to the
flows (asking, extraction, reading ahead), which receive what they use.

Which model answers (this computer's, or a model server's) is `ModelFlow`'s. The window owns
no long work and writes nothing: questions go to `EngineController`,
extractions to `OcrController`, file decoding to `Intake`, history and settings writes to
`StorageController`; their results come back by signals. The open conversation is the
`ConversationSession`'s.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSize, Qt, QThreadPool, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QMainWindow,
    QPushButton,
    QSplitter,
    QToolButton,
)

from desktop import APP_NAME
from desktop.core.history import HistoryStore
from desktop.core.paths import models_dir
from desktop.core.remote.config import ServerConfig
from desktop.gui.flows.asking import AskFlow, ChatParts
from desktop.gui.flows.attaching import AttachFlow
from desktop.gui.flows.capturing import CaptureFlow
from desktop.gui.flows.evidence import EvidenceFlow
from desktop.gui.flows.export_chat import ExportFlow
from desktop.gui.flows.extraction import ExtractionFlow
from desktop.gui.flows.legibility_check import LegibilityFlow
from desktop.gui.flows.model_source import ModelFlow
from desktop.gui.flows.own_presets import OwnPresetsFlow
from desktop.gui.flows.preparing import PrepareFlow
from desktop.gui.flows.redacting import RedactFlow
from desktop.gui.flows.rewinding import RewindFlow
from desktop.gui.flows.session import ConversationSession
from desktop.gui.image_ref import ImageRef
from desktop.gui.lifetimes import GuiCollector, run_dialog
from desktop.gui.panels.chat_page import ChatPage
from desktop.gui.panels.settings_dialog import SettingsDialog
from desktop.gui.settings import AppSettings, SettingsStore
from desktop.gui.theme import apply_theme, current_theme
from desktop.gui.tray.in_app import WindowTray
from desktop.gui.widgets.basics import release_after_menu
from desktop.gui.widgets.drop import DropHandler
from desktop.gui.widgets.icons import app_icon, line_icon
from desktop.gui.widgets.image_viewer import ImageViewer, open_viewer
from desktop.gui.widgets.messages import ChatActions
from desktop.gui.widgets.outlines import Marks
from desktop.gui.widgets.sidebar import Sidebar
from desktop.gui.widgets.status import StatusBar
from desktop.gui.workers.engine_worker import EngineController
from desktop.gui.workers.local_api import window_local_api
from desktop.gui.workers.ocr_worker import OcrController
from desktop.gui.workers.storage_worker import StorageController

logger = logging.getLogger(__name__)

SHUTDOWN_TIMEOUT_MS = 10_000
MINIMUM_SIZE = QSize(640, 440)
COMPACT_WIDTH = 1000  # narrower windows fold the sidebar away (the header's button opens it)


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
        self._closed = False
        # First: from here on, Qt objects in cycles die on this thread only (lifetimes.py).
        self.collector = GuiCollector(self)
        self.collector.start()

        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(app_icon())
        self.setMinimumSize(MINIMUM_SIZE)  # half a 1366x768 screen fits (test_gui_window_sizes)
        self._compact: bool | None = None
        self.storage = StorageController(self)
        self.session = ConversationSession(store, self.storage, self)
        self.engine = EngineController(store, self)
        self.ocr = OcrController(store, data_dir, self)
        self.local_api = window_local_api(self.engine, self.ocr, self.storage, data_dir, self)
        self.local_api.apply(settings)  # off by default
        self.actions_hub = ChatActions(self)
        self._build()
        self.chat.show_transcript(self.session.transcript, self.actions_hub)
        parts = ChatParts(
            self.session,
            self.chat,
            self.composer,
            self.notice,
            self.status,
            self.actions_hub,
            lambda: self.settings,
        )
        self.asking = AskFlow(parts, self.engine, self)
        self.asking.ocr_engine = self.ocr.ocr_engine  # grounded questions
        self.extraction = ExtractionFlow(parts, self.ocr, self.extract_all_button, self)
        button = self.page.capture_button
        self.capturing = CaptureFlow(parts, self.ocr, self.extraction, button, self)
        self.tray = WindowTray(self, self.capturing, self.notice, data_dir)  # Settings > Tray
        self.tray.apply(settings, quiet=True)
        self.rewinding = RewindFlow(parts, self.asking, self)
        self.exporting = ExportFlow(parts, self.settings_button, self)
        menu_buttons: list[QPushButton | QToolButton] = [self.exporting.button]
        for menu_button in menu_buttons + list(self.composer.menu_buttons()):
            release_after_menu(menu_button)
        self.own_presets = OwnPresetsFlow(parts, self.asking, data_dir, self)
        self.models = ModelFlow(
            parts, self.page, self.engine, self.storage, data_dir, model_dir,
            self.apply_settings, self,
        )  # fmt: skip
        self.asking.answer_shown.connect(self.models.on_answer_shown)
        self.evidence = EvidenceFlow(parts, self)  # the lines an answer quotes, outlined
        self.asking.answer_shown.connect(self.evidence.on_answer_shown)
        self._connect()
        self.legibility = LegibilityFlow(  # after AskFlow: a Send's budget is taken first
            parts, self.engine, self.ocr.ocr_engine, self.page.legibility_bar, self
        )
        self.asking.image_detail = self.legibility.detail_for
        self.redacting = RedactFlow(
            parts, self.ocr.ocr_engine, self.engine, self.storage, data_dir, self
        )
        self.asking.send_gate = self.redacting.gate  # offered before a server gets pictures
        self.ocr.set_known_read(self.redacting.read_of)  # a redacted copy's tagged text
        self.asking.image_reads = lambda refs: (
            self.redacting.known_reads(refs) + self.legibility.known_reads(refs)
        )
        # After _connect: its slots see the window updated.
        self.preparing = PrepareFlow(parts, self.engine, self.ocr, self.asking.next_settings, self)
        self.legibility.detail_changed.connect(self.preparing.update)
        self._restore_geometry()
        self.sidebar.refresh()

    @property
    def conversation_id(self) -> int | None:
        return self.session.conversation_id

    @property
    def model_loaded(self) -> bool:
        """A model is loaded (the window's status bar shows it)."""
        return self.engine.status.loaded

    # --- construction --------------------------------------------------------------------

    def _build(self) -> None:
        self.sidebar = Sidebar(self.session)
        page = ChatPage(models_dir(self.data_dir))
        self.page = page
        self.title_label, self.first_run = page.title_label, page.first_run
        self.first_run_holder = page.first_run_holder
        self.extract_all_button, self.settings_button = (
            page.extract_all_button,
            page.settings_button,
        )
        self.chat, self.notice, self.composer = page.chat, page.notice, page.composer

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
        self.attaching = AttachFlow(self.composer, self.notice, self.drop, self)
        self.ocr.open_requested.connect(self.attaching.open_files)
        self.ocr.model_offered.connect(self.models.offer)
        self.composer.view_requested.connect(self.view_image)
        self.actions_hub.view_image.connect(self.view_image)
        self.actions_hub.view_marked.connect(self.view_image)
        self.actions_hub.told.connect(lambda text: self.status.showMessage(text, 4000))
        self.sidebar.conversation_selected.connect(self.open_conversation)
        self.sidebar.deleted.connect(self._on_deleted)
        self.sidebar.purged.connect(self.engine.forget)
        self.sidebar.problem.connect(self._show_problem)
        session = self.session
        session.title_changed.connect(self._show_title)
        session.created.connect(lambda chat: self.sidebar.mark_current(chat.id))
        session.changed.connect(self.sidebar.refresh)
        session.problem.connect(self._show_problem)
        session.problem.connect(lambda _text: self.sidebar.refresh())  # e.g. a rename undone
        self.storage.problem.connect(self._show_problem)
        self.settings_button.clicked.connect(self.open_settings)
        self.page.sidebar_toggle_requested.connect(self.toggle_sidebar)
        self.status.follow_api(self.local_api)
        self.first_run.model_ready.connect(self._on_model_converted)
        self.first_run.server_requested.connect(lambda: self.open_settings(server=True))
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system_scheme_changed)
        for keys, slot, name in (
            ("Ctrl+N", lambda: self.sidebar.select(None), "New chat"),
            ("Ctrl+L", self.composer.focus_editor, "Focus the question box"),
            ("Ctrl+Shift+C", self.asking.copy_last_answer, "Copy the last answer"),
            ("Ctrl+O", self.attaching.attach_files, "Attach files"),
            ("Ctrl+E", self.extraction.extract_all, "Extract text from all"),
            ("Ctrl+,", self.open_settings, "Settings"),
            ("Ctrl+B", self.toggle_sidebar, "Show or hide the chats"),
            (QKeySequence.StandardKey.Paste, self.attaching.paste_clipboard, "Paste an image"),
        ):
            shortcut = QShortcut(QKeySequence(keys), self, slot)
            shortcut.setWhatsThis(name)

    # --- start-up and the model ------------------------------------------------------------

    def start_background_work(self) -> None:
        """Loads the model (or connects to the server) and compiles the OCR in their threads;
        the window is usable now."""
        self.ocr.warm_up()
        self.models.start()

    def load_model(self, folder: str) -> None:
        self.models.load_local(folder)

    @Slot(str)
    def _on_model_converted(self, folder: str) -> None:
        self.settings.model_dir = folder
        self.save_settings(self.settings)
        self.load_model(folder)

    # --- conversations ---------------------------------------------------------------------

    @Slot(object)
    def open_conversation(self, conversation_id: int | None) -> None:
        self.chat.clear()
        self.session.open(conversation_id)  # the flows follow (the answer is detached)
        self.chat.show_transcript(self.session.transcript, self.actions_hub)
        self.rewinding.offer_unanswered()
        if conversation_id is None:  # New chat: the last one's unsent images stay with it
            self.composer.clear_images()
            self.composer.focus_editor()

    def open_last_chat(self) -> None:
        """At start: the chat used last, as it was left (a new chat when there is none)."""
        latest = self.sidebar.latest_id()
        if latest is not None:
            self.sidebar.select(latest)

    @Slot(str)
    def _show_title(self, title: str) -> None:
        self.title_label.setText(title)
        self.setWindowTitle(f"{title} — {APP_NAME}" if title else APP_NAME)

    @Slot(str)
    def _show_problem(self, text: str) -> None:
        self.notice.show_message(text, error=True)

    @Slot(int, str)
    def _on_deleted(self, _conversation_id: int, title: str) -> None:
        self.notice.show_message(
            f'Deleted "{title}".',
            action=("Undo", self.sidebar.undo_delete),
            on_dismiss=self.sidebar.purge_pending,
        )

    # --- images ---------------------------------------------------------------------------

    @Slot(list)
    def open_files(self, paths: list) -> None:
        self.attaching.open_files(paths)

    def view_image(self, ref: ImageRef, marks: Marks | None = None) -> None:
        """Opens the image large with `marks` outlined (or raises its viewer, if open)."""
        viewer = open_viewer(self, ref)
        if viewer is None:
            viewer = ImageViewer(ref, self)
            viewer.extract_requested.connect(lambda ref: self.extraction.extract_text([ref]))
        viewer.show_marks(marks or Marks())
        viewer.show()
        viewer.raise_()
        viewer.activateWindow()

    # --- settings, theme, window state -----------------------------------------------------

    @Slot()
    def open_settings(self, server: bool = False) -> None:
        """Settings (`server`: with "A server" chosen, from the first-run panel)."""
        models = self.models
        precisions = models.precisions
        speed = (precisions, models.measure_again) if precisions else None
        dialog = SettingsDialog(
            self.settings, models.devices, self, self.local_api, self.own_presets,
            models.server, models.checker, redaction=self.redacting, speed=speed,
        )  # fmt: skip
        if models.explicit_model:  # `--model DIR` wins over the automatic choice: say so
            dialog.model_edit.setPlaceholderText(f"{models.explicit_model} (given with --model)")
        if server:
            dialog.source.server_radio.setChecked(True)
        if run_dialog(dialog):
            self.apply_settings(dialog.result_settings(), dialog.result_server())

    def save_settings(self, settings: AppSettings) -> None:
        store = self.settings_store
        self.storage.submit(lambda: store.save(replace(settings)))  # a copy: may change meanwhile

    def apply_settings(self, new: AppSettings, server: ServerConfig | None = None) -> None:
        """`server`: the model server chosen in Settings (None: the saved one stays)."""
        old, self.settings = self.settings, new
        self.local_api.apply(new)
        self.tray.apply(new)
        self.save_settings(new)
        if (new.theme, new.font_size) != (old.theme, old.font_size):
            self._apply_theme(new.theme, new.font_size)
        self.preparing.update()  # reading ahead may have been turned on or off
        self.models.apply(old, new, server)  # another model, or a server, may answer now

    @Slot()
    def _on_system_scheme_changed(self, *_args) -> None:
        if self.settings.theme == "system":
            self._apply_theme("system", self.settings.font_size)

    def _apply_theme(self, theme: str, font_size: int) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme, font_size)
        self._refresh_icons()

    def toggle_sidebar(self, shown: bool | None = None) -> None:
        """Shows or hides the chats (None: the other way)."""
        shown = self.sidebar.isHidden() if shown is None else shown
        self.sidebar.setVisible(shown)
        self.page.set_sidebar_shown(shown)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        compact = self.width() < COMPACT_WIDTH
        if compact != self._compact:  # crossing the line folds or unfolds it; a click wins
            self._compact = compact
            self.toggle_sidebar(not compact)

    def _refresh_icons(self) -> None:
        theme = current_theme()
        self.page.sidebar_button.setIcon(line_icon("sidebar", theme.muted))
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
            store = self.settings_store
            geometry, splitter = self.saveGeometry(), self.splitter.saveState()
            self.storage.submit(lambda: store.set_window_state("geometry", geometry))
            self.storage.submit(lambda: store.set_window_state("splitter", splitter))
            self.hide()  # closed for the user even while a model compile finishes below
            self.sidebar.purge_pending()
            self.first_run.kill()
            self.ocr.cancel_all()
            self.local_api.stop()  # before the engine's thread ends: its jobs stop first
            self.tray.stop()  # the icon goes, the keys are given back
            # Storage goes last, once its queued writes (the purge, the window state) are done.
            for worker in (self.engine, self.ocr, self.storage):
                if not worker.shutdown(SHUTDOWN_TIMEOUT_MS):
                    # Compiling a model cannot be interrupted; a QThread destroyed while it
                    # runs would abort the process, so wait for it.
                    logger.warning("waiting for %s to finish", worker.thread.objectName())
                    worker.thread.wait()
                worker.release()  # models and their threads go now, not at interpreter exit
            QThreadPool.globalInstance().waitForDone()  # image intake tasks
            self.store.close()
            self.collector.stop()  # no thread of ours runs Python now
        super().closeEvent(event)
