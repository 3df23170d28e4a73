"""Screen readers (issue 55): walked through Qt's accessibility tree, every control the
keyboard reaches in the main window, the Settings dialog and the composer with an image has a
role and a name (no two of one window alike), and a finished answer and a finished extraction
are announced."""

from __future__ import annotations

from collections import Counter

import pytest
from gui_support import SIGNAL_TIMEOUT_MS
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import QWidget

Role = QAccessible.Role
# What Qt says for a plain QWidget or QFrame: "client", "border", nothing a control does.
NO_ROLE = {Role.NoRole, Role.Client, Role.Border}


def reachable_controls(top: QWidget) -> list[tuple[QWidget, Role, str]]:
    """(widget, role, name) of every shown, enabled widget that Tab stops on, found by walking
    `top`'s accessibility tree as a screen reader does."""
    found: list[tuple[QWidget, Role, str]] = []

    def walk(node: QAccessibleInterface | None) -> None:
        if node is None or not node.isValid() or node.state().invisible:
            return
        widget = node.object()
        if (
            isinstance(widget, QWidget)
            and widget.isEnabled()
            and widget.focusPolicy() & Qt.FocusPolicy.TabFocus
        ):
            # A combo box on Linux says its value as its name; its label is accessibleName.
            name = widget.accessibleName() or node.text(QAccessible.Text.Name)
            found.append((widget, node.role(), name.strip()))
        for index in range(node.childCount()):
            walk(node.child(index))

    walk(QAccessible.queryAccessibleInterface(top))
    return found


def unlabelled(top: QWidget) -> list[str]:
    """The reachable controls without a role or a name, or with another's name and role."""
    controls = reachable_controls(top)
    assert len(controls) > 3  # the walk reached the controls
    same = Counter((role, name) for _widget, role, name in controls)
    return [
        f"{type(widget).__name__} {role.name} {name!r}"
        for widget, role, name in controls
        if role in NO_ROLE or not name or same[(role, name)] > 1
    ]


@pytest.fixture
def window_with_image(launch, qtbot, sample_image):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    window = launch()
    window.composer.add_images([ImageRef.of(load_image(sample_image, name="shot.png"))])
    qtbot.waitUntil(lambda: bool(window.composer.chips()), timeout=SIGNAL_TIMEOUT_MS)
    return window


def test_the_main_window_and_the_composer_with_an_image_have_names_and_roles(
    window_with_image,
):
    window = window_with_image
    assert unlabelled(window) == []
    said = {name: role for _widget, role, name in reachable_controls(window.composer)}
    assert {"Image shot.png", "Remove shot.png", "Question", "Send"} <= set(said)
    assert said["Image shot.png"] == Role.Button  # Enter views it (a QFrame says "Border")


def test_every_control_of_the_settings_dialog_has_a_name_and_a_role(window_with_image, qtbot):
    from desktop.gui.panels.settings_dialog import SettingsDialog

    window = window_with_image
    models = window.models
    dialog = SettingsDialog(
        window.settings, models.devices, window, window.local_api, window.own_presets,
        models.server, models.checker, redaction=window.redacting,
    )  # fmt: skip
    dialog.show()
    qtbot.waitExposed(dialog)
    try:
        assert unlabelled(dialog) == []
    finally:
        dialog.reject()
        dialog.deleteLater()


@pytest.fixture
def announcements(monkeypatch) -> list[tuple[str, QAccessible.AnnouncementPoliteness]]:
    """What the app announced (message, politeness), as the screen reader would get it."""
    from PySide6.QtGui import QAccessibleAnnouncementEvent

    heard: list[tuple[str, QAccessible.AnnouncementPoliteness]] = []
    deliver = QAccessible.updateAccessibility

    def listen(event) -> None:
        if isinstance(event, QAccessibleAnnouncementEvent):
            heard.append((event.message(), event.politeness()))
        deliver(event)

    monkeypatch.setattr(QAccessible, "updateAccessibility", listen)
    return heard


def test_a_finished_answer_is_announced_with_its_text(qtbot, announcements):
    from desktop.core.chat import Answer
    from desktop.gui.widgets.messages import AssistantMessage

    message = AssistantMessage()
    qtbot.addWidget(message)
    message.append("The total is 786.52.")
    assert announcements == []  # not while it streams
    message.finish(Answer(text="The total is 786.52.", finish_reason="stop"))
    polite = QAccessible.AnnouncementPoliteness.Polite
    assert announcements == [("The answer is ready: The total is 786.52.", polite)]


def test_a_finished_extraction_is_announced(launch, qtbot, sample_image, announcements):
    from desktop.core.images import load_image
    from desktop.gui.image_ref import ImageRef

    window = launch()
    ref = ImageRef.of(load_image(sample_image, name="shot.png"))
    window.extraction.extract_text([ref])
    qtbot.waitUntil(lambda: bool(announcements), timeout=SIGNAL_TIMEOUT_MS)
    message, _politeness = announcements[0]
    assert message.startswith("Text extracted from shot.png: ")
    assert message.endswith(" lines.")
