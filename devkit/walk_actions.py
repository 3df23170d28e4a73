"""What a person does with the app, one action at a time, for the random-session walk
(devkit/walk_child.py). Each action works through the real widgets (their buttons, actions,
dialogs and keys) and may leave work running: the walk's next action can meet it.

An action that does not apply now (Stop with nothing running, Regenerate with no answer) does
nothing: the plan is the seed's alone, so a seed replays the same actions."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QMessageBox,
    QToolButton,
    QWidget,
)

from desktop.gui.panels.presets_editor import PresetsEditor, PresetsRow
from desktop.gui.panels.redaction_patterns import PatternsRow
from desktop.gui.panels.settings_dialog import SettingsDialog
from desktop.gui.settings import THEMES
from desktop.gui.widgets.region_picker import RegionDialog

RESTART = "quit_mid_answer_restart"
# The tiny model writes until the length runs out: short answers keep a walk of hundreds of
# actions within minutes (the length itself is not what the walk tests).
ANSWER_LENGTHS = (16, 24, 48, 64)


@dataclass
class Walk:
    """What the actions share: the window, the pictures to attach, and where files go."""

    window: QWidget  # the MainWindow
    pictures: list[Path]
    out_dir: Path
    notes: list[str] = field(default_factory=list)  # what the last action did, for the log


Action = Callable[[Walk, random.Random], None]


def later(ms: int, run: Callable[[], None]) -> None:
    """`run` once the event loop gets there (e.g. inside a dialog's own loop)."""
    QTimer.singleShot(ms, run)


def answer_modal(
    rng: random.Random,
    handle: Callable[[QDialog], None],
    kind: type[QDialog] = QDialog,
    tries: int = 200,
) -> None:
    """Calls `handle` on the modal dialog of `kind` once it shows (opened by the next call);
    another modal box (a question left by the last action) is not this one."""

    def look(left: int = tries) -> None:
        dialog = QApplication.activeModalWidget()
        if isinstance(dialog, kind) and dialog.isVisible():
            handle(dialog)
        elif left:
            later(25, lambda: look(left - 1))

    later(rng.randint(10, 120), look)


def answer_questions(rng: random.Random, tries: int = 200) -> None:
    """Answers every yes/no question box that shows in the next 5 s (e.g. "drop the later
    turns?" when Send resends an edit): a person answers what the app asks."""

    def look(left: int) -> None:
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox) and box.isVisible():
            _yes_or_no(box, rng)
        if left:
            later(25, lambda: look(left - 1))

    later(10, lambda: look(tries))


def click(button: QAbstractButton | None) -> None:
    if button is not None and button.isVisible() and button.isEnabled():
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def ok_or_cancel(dialog: QDialog, rng: random.Random) -> None:
    box = dialog.findChild(QDialogButtonBox)
    ok = rng.random() < 0.6
    if box is not None:
        which = QDialogButtonBox.StandardButton.Ok if ok else QDialogButtonBox.StandardButton.Cancel
        click(box.button(which))
    if dialog.isVisible():  # refused (a problem shown) or no buttons: Esc
        QTest.keyClick(dialog, Qt.Key.Key_Escape)


# --- Settings, every page --------------------------------------------------------------


def settings(walk: Walk, rng: random.Random) -> None:
    """Settings: one change (or none), then OK, Cancel or Esc."""

    def change(dialog: QDialog) -> None:
        what = rng.choice(["length", "theme", "font", "detail", "ahead", "none"])
        if what == "length":
            dialog.length_spin.setValue(rng.choice(ANSWER_LENGTHS))
        elif what == "theme":
            dialog.theme_combo.setCurrentIndex(rng.randrange(len(THEMES)))
        elif what == "font":
            dialog.font_spin.setValue(rng.choice([0, 9, 11, 14]))
        elif what == "detail":
            dialog.detail_slider.setValue(rng.randint(0, dialog.detail_slider.maximum()))
        elif what == "ahead":
            dialog.prepare_check.click()
        walk.notes.append(what)
        ok_or_cancel(dialog, rng)

    answer_modal(rng, change, SettingsDialog)
    walk.window.open_settings()


def settings_prompts(walk: Walk, rng: random.Random) -> None:
    """Settings › My prompts › Edit…: add one, then OK or Cancel in both dialogs."""

    def in_editor(editor: QDialog) -> None:
        if isinstance(editor, PresetsEditor):
            editor.add()
            editor.name_edit.setText(f"Prompt {rng.randint(1, 999)}")
            editor.prompt_edit.setPlainText("List every number.")
        ok_or_cancel(editor, rng)

    def in_settings(dialog: QDialog) -> None:
        rows = dialog.findChildren(PresetsRow)
        if rows:
            answer_modal(rng, in_editor, PresetsEditor)
            rows[0].open_editor()
        ok_or_cancel(dialog, rng)

    answer_modal(rng, in_settings, SettingsDialog)
    walk.window.open_settings()


def settings_patterns(walk: Walk, rng: random.Random) -> None:
    """Settings › Redaction › Edit…: one pattern more (or a bad one), OK or Cancel."""

    def in_settings(dialog: QDialog) -> None:
        rows = dialog.findChildren(PatternsRow)
        if rows:
            rows[0].open_editor()
            editor = rows[0].editor
            editor.edit.appendPlainText(rng.choice([r"ACME-\d{4}", "(", r"ID\d+"]))
            ok_or_cancel(editor, rng)
        ok_or_cancel(dialog, rng)

    answer_modal(rng, in_settings, SettingsDialog)
    walk.window.open_settings()


# --- pictures ------------------------------------------------------------------------------


def attach(walk: Walk, rng: random.Random) -> None:
    walk.window.attaching.open_files([str(rng.choice(walk.pictures))])


def paste(walk: Walk, rng: random.Random) -> None:
    QGuiApplication.clipboard().setImage(QImage(str(rng.choice(walk.pictures))))
    walk.window.attaching.paste_clipboard()


def chip_action(walk: Walk, rng: random.Random, label: str) -> bool:
    chips = walk.window.composer.chips()
    if not chips:
        return False
    chip = rng.choice(chips)
    for action in chip.actions():
        if action.text() == label and action.isEnabled():
            action.trigger()
            return True
    return False


def region(walk: Walk, rng: random.Random) -> None:
    """Ask about a region…: a box dragged on the picture, then OK, Clear or Esc."""

    def draw(dialog: QDialog) -> None:
        if isinstance(dialog, RegionDialog):
            canvas = dialog.canvas
            w, h = max(canvas.width(), 8), max(canvas.height(), 8)
            start = QPoint(rng.randrange(w // 2), rng.randrange(h // 2))
            end = QPoint(rng.randrange(w // 2, w), rng.randrange(h // 2, h))
            QTest.mousePress(canvas, Qt.MouseButton.LeftButton, pos=start)
            QTest.mouseMove(canvas, end)
            QTest.mouseRelease(canvas, Qt.MouseButton.LeftButton, pos=end)
        ok_or_cancel(dialog, rng)

    if chip_action(walk, rng, "Ask about a region…"):
        answer_modal(rng, draw, RegionDialog)


def redact(walk: Walk, rng: random.Random) -> None:
    chip_action(walk, rng, "Redact before sending")


def remove_picture(walk: Walk, rng: random.Random) -> None:
    chips = walk.window.composer.chips()
    if chips:
        click(rng.choice(chips).close_button)


def capture(walk: Walk, rng: random.Random) -> None:
    """The capture button: the screen freezes; a drag picks a region, or Esc."""
    flow = walk.window.capturing

    def pick(left: int = 200) -> None:
        overlays = [
            w for w in QApplication.topLevelWidgets() if type(w).__name__ == "CaptureOverlay"
        ]
        shown = [o for o in overlays if o.isVisible()]
        if not shown:
            if left:
                later(25, lambda: pick(left - 1))
            return
        overlay = shown[0]
        if rng.random() < 0.3:
            QTest.keyClick(overlay, Qt.Key.Key_Escape)
            return
        start = QPoint(rng.randint(20, 300), rng.randint(20, 200))
        end = start + QPoint(rng.randint(60, 400), rng.randint(40, 200))
        QTest.mousePress(overlay, Qt.MouseButton.LeftButton, pos=start)
        QTest.mouseMove(overlay, end)
        QTest.mouseRelease(overlay, Qt.MouseButton.LeftButton, pos=end)

    click(walk.window.page.capture_button)
    later(rng.randint(50, 300), pick)
    if flow.boxes_dialog is not None:
        ok_or_cancel(flow.boxes_dialog, rng)


# --- asking --------------------------------------------------------------------------------

QUESTIONS = ["What is the total?", "Read the first line.", "Describe this.", "Any dates?"]


def ask(walk: Walk, rng: random.Random) -> None:
    composer = walk.window.composer
    composer.focus_editor()
    composer.editor.setPlainText(rng.choice(QUESTIONS))
    QTest.keyClick(composer.editor, Qt.Key.Key_Return)


def stop(walk: Walk, rng: random.Random) -> None:
    if walk.window.composer.generating:
        if rng.random() < 0.5:
            click(walk.window.composer.send_button)  # Send shows Stop while answering
        else:
            QTest.keyClick(walk.window, Qt.Key.Key_Escape)


def message_button(walk: Walk, rng: random.Random, label: str, answer: bool = True) -> None:
    """Clicks `label` on a random message that has it; a "drop the later turns?" question
    is answered Yes or No."""
    found = [
        button
        for message in walk.window.chat.messages()
        for button in message.findChildren(QToolButton)
        if button.text() == label and button.isEnabled()
    ]
    if not found:
        return
    if answer:
        answer_modal(rng, lambda box: _yes_or_no(box, rng), QMessageBox)
    click(rng.choice(found))


def _yes_or_no(box: QDialog, rng: random.Random) -> None:
    if isinstance(box, QMessageBox):
        which = (
            QMessageBox.StandardButton.Yes if rng.random() < 0.7 else QMessageBox.StandardButton.No
        )
        button = box.button(which) or box.defaultButton()
        if button is not None:
            button.click()
            return
    box.reject()


def regenerate(walk: Walk, rng: random.Random) -> None:
    message_button(walk, rng, "Regenerate")


def retry(walk: Walk, rng: random.Random) -> None:
    message_button(walk, rng, "Retry")


def edit(walk: Walk, rng: random.Random) -> None:
    """Edit on a question, new words, then Send (or Esc: the edit is cancelled)."""
    message_button(walk, rng, "Edit", answer=False)
    editor = walk.window.composer.editor
    if walk.window.rewinding.bar.isVisible():
        editor.setPlainText(rng.choice(QUESTIONS) + " (edited)")
        key = Qt.Key.Key_Return if rng.random() < 0.8 else Qt.Key.Key_Escape
        answer_modal(rng, lambda box: _yes_or_no(box, rng), QMessageBox)
        QTest.keyClick(editor, key)


def extract(walk: Walk, rng: random.Random) -> None:
    if rng.random() < 0.5:
        chip_action(walk, rng, "Extract text")
    else:
        message_button(walk, rng, "Extract text", answer=False)


def save_table(walk: Walk, rng: random.Random) -> None:
    """Table ▾ › Save table as… on an extraction with a table; the file dialog is answered
    with a path in the walk's folder (a native dialog cannot be driven)."""
    buttons = [
        b
        for m in walk.window.chat.messages()
        for b in m.findChildren(QToolButton)
        if b.text() == "Table" and b.menu() is not None
    ]
    if not buttons:
        return
    target = walk.out_dir / f"table-{rng.randint(0, 99)}.{rng.choice(['xlsx', 'csv'])}"
    original = QFileDialog.getSaveFileName
    QFileDialog.getSaveFileName = staticmethod(lambda *_a, **_k: (str(target), ""))  # type: ignore[method-assign]
    try:
        menu = rng.choice(buttons).menu()
        menu.actions()[0].trigger()
    finally:
        QFileDialog.getSaveFileName = original  # type: ignore[method-assign]


# --- chats and the window ------------------------------------------------------------------


def switch_chat(walk: Walk, rng: random.Random) -> None:
    listing = walk.window.sidebar.list
    if listing.count():
        item = listing.item(rng.randrange(listing.count()))
        rect = listing.visualItemRect(item)
        listing.scrollToItem(item)
        QTest.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def new_chat(walk: Walk, rng: random.Random) -> None:
    QTest.keySequence(walk.window, "Ctrl+N")


def delete_chat(walk: Walk, rng: random.Random) -> None:
    sidebar = walk.window.sidebar
    current = sidebar.current_id
    if current is not None:
        sidebar.delete_conversation(current)
        if rng.random() < 0.3:
            sidebar.undo_delete()


def reopen_chat(walk: Walk, rng: random.Random) -> None:
    latest = walk.window.sidebar.latest_id()
    if latest is not None:
        walk.window.sidebar.select(latest)


def resize(walk: Walk, rng: random.Random) -> None:
    size = rng.choice([(640, 440), (800, 600), (1000, 700), (1300, 860)])
    walk.window.resize(*size)


ACTIONS: dict[str, Action] = {
    "settings": settings,
    "settings_prompts": settings_prompts,
    "settings_patterns": settings_patterns,
    "attach": attach,
    "paste": paste,
    "region": region,
    "redact": redact,
    "remove_picture": remove_picture,
    "capture": capture,
    "ask": ask,
    "stop": stop,
    "regenerate": regenerate,
    "retry": retry,
    "edit": edit,
    "extract": extract,
    "save_table": save_table,
    "switch_chat": switch_chat,
    "new_chat": new_chat,
    "delete_chat": delete_chat,
    "reopen_chat": reopen_chat,
    "resize": resize,
}
# How often each comes up: asking and pictures most, as in real use.
WEIGHTS = {"ask": 6, "attach": 4, "paste": 2, "stop": 2, "settings": 3, "switch_chat": 3}


def plan(seed: int, count: int, cycle: tuple[str, ...] = ()) -> list[str]:
    """The walk's actions, from the seed alone; a restart (quit mid-answer) now and then.
    With `cycle`, those actions in turn (e.g. Settings then ask): their choices still random."""
    if cycle:
        return [cycle[i % len(cycle)] for i in range(count)]
    rng = random.Random(seed)
    names = [*ACTIONS, RESTART]
    weights = [WEIGHTS.get(name, 1) for name in ACTIONS] + [0.4]
    return rng.choices(names, weights, k=count)


def action_rng(seed: int, index: int) -> random.Random:
    """The choices inside action `index` (which chat, which button): the seed's too."""
    return random.Random(seed * 1_000_003 + index)
