"""Every themed text colour on each background it is drawn on meets WCAG AA (4.5:1) in both
themes, and popup menus keep the theme's colours wherever they open (issue 29)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QMenu

from desktop.gui.theme import DARK, LIGHT, TEXT_PAIRS, contrast_ratio, style_sheet

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
    assert [a.text() for a in menu.actions()] == ["Extract text", "Remove"]
    menu.ensurePolished()
    menu.resize(menu.sizeHint())
    picture = menu.grab().toImage()
    middle = picture.pixelColor(picture.width() // 2, picture.height() - 6)
    assert middle.name() == QColor(theme.surface).name()
    text = menu.palette().color(menu.foregroundRole()).name()
    assert contrast_ratio(text, theme.surface) >= AA
    apply_theme(QApplication.instance(), "light")
