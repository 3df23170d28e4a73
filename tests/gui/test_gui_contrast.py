"""Every themed text colour on each background it is drawn on meets WCAG AA (4.5:1) in both
themes, every check box, radio button and field boundary 3:1 (WCAG 1.4.11, issue 39), and popup
menus keep the theme's colours wherever they open (issue 29)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QMenu

from desktop.gui.theme import CONTROL_PAIRS, DARK, LIGHT, TEXT_PAIRS, contrast_ratio, style_sheet

GUI_SOURCES = Path(__file__).resolve().parents[2] / "desktop" / "gui"
AA = 4.5


def test_contrast_ratio_matches_the_wcag_reference_values():
    # WCAG 2 defines the extremes; #767676 on white is the classic lightest grey that passes
    # AA (4.54:1) and #777777 the first that fails (4.48:1), as WebAIM's checker reports.
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
def test_every_text_colour_pair_of_the_themes_meets_wcag_aa(theme):
    failing = [
        f"{where}: {fg} {getattr(theme, fg)} on {bg} {getattr(theme, bg)} "
        f"= {contrast_ratio(getattr(theme, fg), getattr(theme, bg)):.2f}"
        for where, fg, bg in TEXT_PAIRS
        if contrast_ratio(getattr(theme, fg), getattr(theme, bg)) < AA
    ]
    assert failing == []


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
def test_every_text_colour_of_the_style_sheet_is_checked(theme):
    """A colour given as `color:` in the style sheet is one of the checked text colours (the
    disabled states aside): a new one cannot slip past the test above."""
    sheet = style_sheet(theme)
    checked = {getattr(theme, fg) for _where, fg, _bg in TEXT_PAIRS}
    rules = re.findall(r"([^{}]+)\{\{?([^}]*)\}", sheet)
    used = set()
    for selector, body in rules:
        if ":disabled" in selector:
            continue
        used.update(re.findall(r"(?<![-\w])color:\s*(#[0-9a-fA-F]{6})", body))
    assert used and used <= checked


def test_no_gui_module_sets_a_style_sheet_of_its_own():
    """A widget's own style sheet reaches all its children, context menus included (the
    attachment chips' menu was drawn black on X11 under `background: transparent`); colours
    and backgrounds live in theme.py, by object name."""
    offenders = [
        path.name
        for path in GUI_SOURCES.rglob("*.py")
        if path.name != "theme.py" and ".setStyleSheet(" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


@pytest.mark.parametrize("choice", ["light", "dark"])
def test_the_attachment_chips_context_menu_is_drawn_in_the_theme(qtbot, choice, sample_image):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef
    from desktop.gui.theme import apply_theme
    from desktop.gui.widgets.composer import Composer

    theme = apply_theme(QApplication.instance(), choice)
    composer = Composer()
    qtbot.addWidget(composer)
    composer.add_images([ImageRef.of(load_image(sample_image, name="shot.png"))])
    composer.resize(700, 240)
    composer.show()
    chip = composer.chips()[0]
    # The menu Qt builds for an ActionsContextMenu widget: the chip's actions, the chip as
    # its parent (so it inherits what the chip's ancestors style).
    menu = QMenu(chip)
    for action in chip.actions():
        menu.addAction(action)
    assert [a.text() for a in menu.actions()] == ["Extract text", "Ask about a region…", "Remove"]
    menu.ensurePolished()
    menu.resize(menu.sizeHint())
    picture = menu.grab().toImage()
    middle = picture.pixelColor(picture.width() // 2, picture.height() - 6)
    assert middle.name() == QColor(theme.surface).name()
    text = menu.palette().color(menu.foregroundRole()).name()
    assert contrast_ratio(text, theme.surface) >= AA
    apply_theme(QApplication.instance(), "light")


NON_TEXT = 3.0  # WCAG 2.1 1.4.11: a control's boundary against what is next to it


@pytest.mark.parametrize("theme", [LIGHT, DARK], ids=["light", "dark"])
def test_every_control_boundary_colour_of_the_themes_meets_3_to_1(theme):
    failing = [
        f"{where}: {getattr(theme, fg)} on {getattr(theme, bg)}"
        for where, fg, bg in CONTROL_PAIRS
        if contrast_ratio(getattr(theme, fg), getattr(theme, bg)) < NON_TEXT
    ]
    assert failing == []


def boundary_contrast(picture, inner: QRect, background: str) -> float:
    """The strongest contrast, against `background`, of the pixels on `inner`'s edge (the
    boundary as drawn, a pixel either way) in `picture` (what the user sees)."""
    best = 1.0
    ring = inner.adjusted(-1, -1, 1, 1)
    for x in range(ring.left(), ring.right() + 1):
        for y in range(ring.top(), ring.bottom() + 1):
            if inner.adjusted(2, 2, -2, -2).contains(x, y):
                continue
            colour = picture.pixelColor(x, y).name()
            best = max(best, contrast_ratio(colour, background))
    return best


def control_boundary(widget) -> QRect:
    """The rect a check box's, radio button's or field's boundary is drawn on, in its parent."""
    from PySide6.QtWidgets import QCheckBox, QRadioButton, QStyle, QStyleOptionButton

    if isinstance(widget, (QCheckBox, QRadioButton)):
        option = QStyleOptionButton()
        widget.initStyleOption(option)
        element = (
            QStyle.SubElement.SE_CheckBoxIndicator
            if isinstance(widget, QCheckBox)
            else QStyle.SubElement.SE_RadioButtonIndicator
        )
        rect = widget.style().subElementRect(element, option, widget)
        return rect.translated(widget.pos())
    return widget.geometry()


@pytest.mark.parametrize("choice", ["light", "dark"])
@pytest.mark.parametrize("background", ["window", "surface"])
def test_check_boxes_radio_buttons_and_fields_are_drawn_3_to_1(qtbot, choice, background):
    """Rendered by the app's style: an unchecked box, a radio, a line edit, a spin box, a combo
    box and a text field each show a boundary of at least 3:1 on the window and on a card."""
    from PySide6.QtWidgets import (
        QCheckBox,
        QComboBox,
        QFrame,
        QLineEdit,
        QPlainTextEdit,
        QRadioButton,
        QSpinBox,
        QVBoxLayout,
    )

    from desktop.gui.theme import apply_theme

    theme = apply_theme(QApplication.instance(), choice)
    holder = QFrame()
    holder.setObjectName("card" if background == "surface" else "")
    qtbot.addWidget(holder)
    layout = QVBoxLayout(holder)
    combo = QComboBox()
    combo.addItems(["Automatic", "CPU"])
    controls = [
        QCheckBox("Use the extracted text"),
        QRadioButton("A server"),
        QLineEdit(),
        QSpinBox(),
        combo,
        QPlainTextEdit(),
    ]
    for control in controls:
        layout.addWidget(control)
    holder.resize(420, 420)
    holder.show()
    qtbot.waitExposed(holder)
    colour = getattr(theme, background)
    picture = holder.grab().toImage()
    assert picture.pixelColor(2, 2).name() == colour  # the background the controls sit on
    try:
        weak = [
            f"{type(control).__name__} {ratio:.2f}"
            for control in controls
            if (ratio := boundary_contrast(picture, control_boundary(control), colour)) < NON_TEXT
        ]
        assert weak == []
    finally:
        apply_theme(QApplication.instance(), "light")
