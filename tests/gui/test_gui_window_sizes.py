"""The window at every size (issue 29): from 1400x900 down to the minimum, no button's label
is cut, no control overlaps another, Send stays whole, and the layout folds (the sidebar,
the presets) below COMPACT_WIDTH rather than squeezing."""

from __future__ import annotations

import pytest
from gui_support import SIGNAL_TIMEOUT_MS
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QScrollArea,
    QWidget,
)

from desktop.core.chat import AnswerStats
from desktop.core.images import load_image
from desktop.gui.image_ref import ImageRef
from desktop.gui.main_window import COMPACT_WIDTH, MINIMUM_SIZE
from desktop.gui.panels.settings_dialog import WINDOW_FRAME_PX, SettingsDialog
from desktop.gui.settings import AppSettings
from desktop.gui.widgets.attachment_chip import AttachmentChip
from desktop.gui.widgets.basics import ElidedLabel

SIZES = ((1400, 900), (1024, 700), (800, 600), (640, 480))
CONTROLS = (QAbstractButton, QLabel, QLineEdit, QPlainTextEdit, QComboBox, QProgressBar)
LONG_STATS = AnswerStats(
    ttft_s=0.12, tokens_per_s=14.3, generated_tokens=120, drafted_tokens=90, accepted_tokens=61
)


def settle() -> None:
    for _ in range(3):  # layouts answer their requests over a few rounds of posted events
        QApplication.processEvents()


def visible_rect(widget: QWidget, window: QWidget) -> QRect:
    """Where the widget can be seen in the window: its rectangle cut by every ancestor's."""
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        rect &= QRect(parent.mapTo(window, QPoint(0, 0)), parent.size())
        parent = parent.parentWidget()
    return rect & window.rect()


def shown_controls(window: QWidget) -> list[QWidget]:
    controls = []
    for widget in window.findChildren(QWidget):
        if not isinstance(widget, CONTROLS) or not widget.isVisibleTo(window):
            continue
        if not visible_rect(widget, window).isEmpty():
            controls.append(widget)
    return controls


def inside_scroll_area(widget: QWidget, window: QWidget) -> bool:
    """Scrolled content may be cut at the viewport's edge on purpose (the chat, the set-up
    card); the user scrolls to it."""
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        if isinstance(parent, QScrollArea) and parent.objectName() != "attachStrip":
            return True
        parent = parent.parentWidget()
    return False


def label_of(widget: QWidget) -> str:
    """The text a button or a one-line label must show whole ("" for anything else)."""
    if isinstance(widget, QAbstractButton) and not isinstance(widget, QCheckBox):
        return widget.text() if widget.text() != "×" else ""
    if isinstance(widget, QLabel) and not isinstance(widget, ElidedLabel):
        return widget.text() if not widget.wordWrap() else ""
    return ""


def cut_labels(window: QWidget) -> list[str]:
    """Buttons (and one-line labels) narrower or shorter than their text needs, or cut by
    their container; an ElidedLabel may be cut, with its whole text in its tooltip."""
    problems = []
    for widget in shown_controls(window):
        if isinstance(widget, ElidedLabel) and widget.shown_text() != widget.full_text():
            assert widget.full_text() in widget.toolTip(), widget.full_text()
        text = label_of(widget)
        if not text:
            continue
        need = widget.sizeHint()
        whole = QRect(widget.mapTo(window, QPoint()), widget.size())
        if widget.width() < need.width() - 1 or widget.height() < need.height() - 6:
            problems.append(f"{type(widget).__name__} {text!r}: {widget.size()} < {need}")
        elif not inside_scroll_area(widget, window) and visible_rect(widget, window) != whole:
            problems.append(f"{type(widget).__name__} {text!r} is cut by its container")
    return problems


def overlaps(window: QWidget) -> list[str]:
    controls = shown_controls(window)
    rects = {id(w): visible_rect(w, window) for w in controls}
    problems = []
    for i, first in enumerate(controls):
        for second in controls[i + 1 :]:
            if first.isAncestorOf(second) or second.isAncestorOf(first):
                continue
            if isinstance(first.parentWidget(), AttachmentChip):
                continue  # a chip's close button sits on its picture's corner by design
            shared = rects[id(first)] & rects[id(second)]
            if shared.width() > 1 and shared.height() > 1:
                problems.append(f"{describe(first)} overlaps {describe(second)}")
    return problems


def describe(widget: QWidget) -> str:
    text = widget.text() if hasattr(widget, "text") and callable(widget.text) else ""
    return f"{type(widget).__name__}({widget.objectName() or text!r})"


def check_window(window, width: int, height: int) -> None:
    window.resize(width, height)
    settle()
    assert (window.width(), window.height()) == (width, height)
    assert cut_labels(window) == []
    assert overlaps(window) == []
    send = window.composer.send_button
    whole = QRect(send.mapTo(window, QPoint()), send.size())
    assert send.isVisible() and visible_rect(send, window) == whole
    assert send.width() >= send.sizeHint().width()
    compact = width < COMPACT_WIDTH
    assert window.sidebar.isVisible() == (not compact)


def dress(window, sample_image) -> None:
    """Everything the window can show at once: images attached (the presets enabled), a
    long status line, and a long chat title."""
    ref = ImageRef.of(load_image(sample_image, name="a-screenshot-with-a-long-name.png"))
    window.composer.add_images([ref])
    window.composer.editor.setPlainText("What is the total of this invoice?")
    window.status.set_stats(LONG_STATS)
    window.title_label.setText("What is the total of the invoice in this long screenshot?")


def test_the_window_without_a_model_at_every_size(qtbot, launch, sample_image):
    window = launch()
    assert window.first_run_holder.isVisible()
    dress(window, sample_image)
    for width, height in SIZES:
        check_window(window, width, height)
        # The set-up card gets the height; the empty chat's hint is not squeezed under it.
        assert window.first_run_holder.isVisible() and not window.chat.isVisible()
    title = window.title_label  # at 640 px the long title is cut, whole in its tooltip
    assert title.shown_text().endswith("…") and title.full_text() in title.toolTip()


def test_the_window_with_a_model_at_every_size_in_both_themes(qtbot, launch, tiny_ir, sample_image):
    from dataclasses import replace

    window = launch(model_dir=tiny_ir)
    dress(window, sample_image)
    window.composer.set_generating(True)  # Stop is the wider label
    for theme in ("light", "dark"):
        window.apply_settings(replace(window.settings, theme=theme))
        for width, height in SIZES:
            check_window(window, width, height)
    window.composer.set_generating(False)


def test_the_minimum_size_keeps_every_control_readable(qtbot, launch, sample_image):
    window = launch()
    dress(window, sample_image)
    window.resize(320, 240)  # refused below the minimum
    settle()
    assert window.size() == MINIMUM_SIZE
    assert cut_labels(window) == [] and overlaps(window) == []


def test_below_the_compact_width_the_presets_fold_into_one_menu(qtbot, launch, sample_image):
    window = launch()
    composer = window.composer
    dress(window, sample_image)
    window.resize(1400, 900)
    settle()
    assert not composer.compact
    assert all(chip.isVisible() for chip in composer.preset_buttons.values())
    window.resize(640, 480)
    settle()
    assert composer.compact and composer.ask_menu_button.isVisible()
    assert not any(chip.isVisible() for chip in composer.preset_buttons.values())
    menu = composer.ask_menu_button.menu()
    labels = [a.text() for a in menu.actions() if not a.isSeparator()]
    assert labels == [chip.text() for chip in composer.preset_buttons.values()]
    assert all(a.toolTip() for a in menu.actions() if not a.isSeparator())
    with qtbot.waitSignal(composer.preset_requested, timeout=SIGNAL_TIMEOUT_MS) as sent:
        next(a for a in menu.actions() if a.text() == "Describe").trigger()
    assert sent.args[0] == "describe"


def test_the_sidebar_folds_and_opens_from_the_header(qtbot, launch, sample_image):
    window = launch()
    window.resize(1400, 900)
    settle()
    assert window.sidebar.isVisible()
    window.resize(800, 600)
    settle()
    assert not window.sidebar.isVisible()
    window.page.sidebar_button.click()  # opened in the narrow window
    settle()
    assert window.sidebar.isVisible() and window.page.sidebar_button.isChecked()
    assert cut_labels(window) == [] and overlaps(window) == []
    window.page.sidebar_button.click()
    settle()
    assert not window.sidebar.isVisible()
    window.resize(1200, 800)  # wide again: it comes back
    settle()
    assert window.sidebar.isVisible()


def test_the_presets_do_not_move_when_an_image_is_attached(qtbot, launch, sample_image):
    """Issue 29: the image count used to appear before the presets, shifting them right under
    the pointer (a click meant for Mine sent Describe)."""
    from desktop.core.presets import Preset

    window = launch()
    window.resize(1400, 900)
    window.composer.set_own_presets([Preset("user:1", "Totals", "Sum the totals.")])
    settle()
    before = {key: b.mapTo(window, QPoint()) for key, b in window.composer.preset_buttons.items()}
    mine = window.composer.own_presets_button.mapTo(window, QPoint())
    window.composer.add_images([ImageRef.of(load_image(sample_image, name="shot.png"))])
    settle()
    after = {key: b.mapTo(window, QPoint()) for key, b in window.composer.preset_buttons.items()}
    assert {k: p.x() for k, p in after.items()} == {k: p.x() for k, p in before.items()}
    assert window.composer.own_presets_button.mapTo(window, QPoint()).x() == mine.x()
    assert "1 image" in window.composer.count_label.full_text()


@pytest.mark.parametrize("width", [640, 1400])
def test_the_header_labels_shorten_rather_than_cut(qtbot, launch, width):
    window = launch()
    window.resize(width, 600)
    window.page.sidebar_button.click() if width == 640 else None  # the narrowest page
    settle()
    label = window.extract_all_button.text()
    assert label in ("Extract text from all", "Extract all")
    assert "Extract text from all" in window.extract_all_button.toolTip()
    assert cut_labels(window) == []


@pytest.mark.parametrize("server", [False, True])
def test_settings_scroll_on_a_short_screen_and_ok_stays_in_view(qtbot, server):
    """A 1366x768 laptop at 150 % offers about 900x480; minus panels, less. Every row can be
    scrolled into view whole, and OK and Cancel never leave it; on a tall screen nothing
    scrolls."""
    dialog = SettingsDialog(AppSettings(), ["CPU"])
    qtbot.addWidget(dialog)
    dialog.source.server_radio.setChecked(server)
    dialog.show()
    short = QRect(0, 0, 900, 360)
    dialog.fit_to(short)
    settle()
    assert dialog.height() <= short.height() - WINDOW_FRAME_PX
    assert dialog.rows_area.verticalScrollBar().isVisible()
    page = dialog.rows_area.widget()
    rows = [
        w for w in page.findChildren(QWidget) if isinstance(w, CONTROLS) and w.isVisibleTo(page)
    ]
    hidden_at_first = [w for w in rows if visible_rect(w, dialog).size() != w.size()]
    assert hidden_at_first  # the test scrolls for real
    for control in rows:
        # (ensureWidgetVisible brings only a line edit's text cursor into view)
        centre = control.mapTo(page, control.rect().center())
        dialog.rows_area.ensureVisible(
            centre.x(), centre.y(), control.width() // 2 + 1, control.height() // 2 + 1
        )
        settle()
        assert visible_rect(control, dialog).size() == control.size(), control
        for button in dialog.buttons.buttons():
            assert visible_rect(button, dialog).size() == button.size()
    assert cut_labels(dialog) == []

    dialog.fit_to(QRect(0, 0, 1400, 900))
    settle()
    assert not dialog.rows_area.verticalScrollBar().isVisible()
