"""The keyboard (issue 55): every focusable control shows where the focus is at 3:1 in both
themes (WCAG 2.2), the window opens with the focus in the question box, and an attached
image's chip takes the focus and opens its menu (Ask about a region…, Redact before sending)
from the keyboard."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QMenu, QVBoxLayout, QWidget

from desktop.gui.theme import apply_theme, contrast_ratio

FOCUS_CONTRAST = 3.0  # WCAG 2.2, 2.4.13 / 1.4.11: the indicator against its unfocused look
RING_SHARE = 0.9  # a 1-px ring all round, less what rounded corners take
FOCUS_TIMEOUT_MS = 10_000  # a focus change or a menu: events of this process only


def _attached(qtbot, sample_image):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.widgets.composer import Composer

    composer = Composer()
    composer.add_images([ImageRef.of(load_image(sample_image, name="shot.png"))])
    composer.editor.setPlainText("What is the total?")
    return composer


def _indicator_pixels(before: QImage, after: QImage, widget: QWidget, top: QWidget) -> int:
    """How many pixels on and just around `widget` changed by 3:1 or more when it took the
    focus: the focus indicator as the user sees it, against what was there."""
    origin = widget.mapTo(top, QPoint(0, 0))
    changed = 0
    for x in range(origin.x() - 2, origin.x() + widget.width() + 2):
        for y in range(origin.y() - 2, origin.y() + widget.height() + 2):
            was, now = before.pixelColor(x, y).name(), after.pixelColor(x, y).name()
            changed += contrast_ratio(was, now) >= FOCUS_CONTRAST
    return changed


@pytest.mark.parametrize("choice", ["light", "dark"])
def test_every_kind_of_control_shows_its_focus_at_3_to_1(qtbot, choice, sample_image):
    """The paperclip and Copy (flat), a preset chip, Send, an attached image's chip and a
    field each change about a 1-px ring's worth of pixels by 3:1 when focused (the flat
    buttons showed nothing; the chips and Send a frame of about 1.6:1)."""
    from PySide6.QtWidgets import QLineEdit

    from desktop.gui.widgets.basics import copy_button

    apply_theme(QApplication.instance(), choice)
    try:
        top = QWidget()
        qtbot.addWidget(top)
        layout = QVBoxLayout(top)
        composer = _attached(qtbot, sample_image)
        copy, field = copy_button(lambda: "x"), QLineEdit()
        for widget in (composer, copy, field):
            layout.addWidget(widget)
        top.resize(820, 320)
        top.show()
        top.activateWindow()
        qtbot.waitUntil(top.isActiveWindow, timeout=FOCUS_TIMEOUT_MS)
        controls = {
            "paperclip": composer.attach_button,
            "preset chip": composer.preset_buttons["text"],
            "Send": composer.send_button,
            "Copy": copy,
            "image chip": composer.chips()[0],
            "field": field,
        }
        weak = []
        for name, control in controls.items():
            composer.editor.setFocus()
            qtbot.waitUntil(composer.editor.hasFocus)
            before = top.grab().toImage()
            control.setFocus(Qt.FocusReason.TabFocusReason)
            qtbot.waitUntil(control.hasFocus)
            after = top.grab().toImage()
            ring = int(RING_SHARE * 2 * (control.width() + control.height()))
            if (changed := _indicator_pixels(before, after, control, top)) < ring:
                weak.append(f"{name}: {changed} of {ring}")
        assert weak == []
    finally:
        apply_theme(QApplication.instance(), "light")


def test_the_window_opens_with_the_focus_in_the_question_box(launch, qtbot):
    window = launch()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None, timeout=FOCUS_TIMEOUT_MS)
    assert QApplication.focusWidget() is window.composer.editor
    qtbot.keyClicks(QApplication.focusWidget(), "total?")
    assert window.composer.editor.toPlainText() == "total?"


def _menu_from_keys(qtbot, chip, keys: tuple[Qt.Key, Qt.KeyboardModifier]) -> list[str]:
    """Presses `keys` on the focused chip; the texts of the menu that opened (closed again)."""
    seen: list[str] = []

    def read_menu() -> None:
        menu = QApplication.activePopupWidget()
        if isinstance(menu, QMenu):
            seen.extend(action.text() for action in menu.actions())
            menu.close()
        else:
            QTimer.singleShot(20, read_menu)

    QTimer.singleShot(0, read_menu)
    qtbot.keyClick(chip, keys[0], keys[1])
    qtbot.waitUntil(lambda: bool(seen), timeout=FOCUS_TIMEOUT_MS)
    return seen


def test_an_attached_images_chip_takes_the_focus_and_opens_its_menu_from_the_keyboard(
    launch, qtbot, sample_image
):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.widgets.region_picker import RegionDialog

    window = launch()
    composer = window.composer
    composer.add_images([ImageRef.of(load_image(sample_image, name="shot.png"))])
    chip = composer.chips()[0]
    window.activateWindow()
    composer.focus_editor()
    qtbot.waitUntil(composer.editor.hasFocus, timeout=FOCUS_TIMEOUT_MS)
    # Shift+Tab from the question box reaches the chip's × and then the chip (above it).
    for stop in (chip.close_button, chip):
        focused = QApplication.focusWidget()
        qtbot.keyClick(focused, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
        qtbot.waitUntil(lambda s=stop: QApplication.focusWidget() is s, timeout=FOCUS_TIMEOUT_MS)
    expected = ["Extract text", "Ask about a region…", "Redact before sending", "Remove"]
    assert _menu_from_keys(qtbot, chip, (Qt.Key.Key_Menu, Qt.KeyboardModifier.NoModifier)) == (
        expected
    )
    shift_f10 = (Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert _menu_from_keys(qtbot, chip, shift_f10) == expected

    # Down, Enter in the menu: the box drawing opens on the image, from the keyboard alone.
    def choose_region() -> None:
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(20, choose_region)
            return
        qtbot.keyClick(menu, Qt.Key.Key_Down)
        qtbot.keyClick(menu, Qt.Key.Key_Down)
        qtbot.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(0, choose_region)
    qtbot.keyClick(chip, Qt.Key.Key_Menu)
    qtbot.waitUntil(lambda: bool(composer.findChildren(RegionDialog)), timeout=FOCUS_TIMEOUT_MS)
    dialog = composer.findChildren(RegionDialog)[0]
    qtbot.waitUntil(dialog.isVisible, timeout=FOCUS_TIMEOUT_MS)
    dialog.reject()
