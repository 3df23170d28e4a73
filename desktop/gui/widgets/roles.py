"""The role a screen reader says for a widget of ours that Qt knows only by its base class.

A thumbnail is a QFrame, which Qt reports as "Border", yet it works as a button: Enter or a
click views it, the Menu key opens its menu (issue 55). A class says its role in
`ACCESSIBLE_ROLE`; Qt's accessibility cache owns the interfaces made here and drops each with
its widget.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAccessible, QAccessibleInterface
from PySide6.QtWidgets import QAccessibleWidget, QWidget

_installed = False


def _interface(_class_name: str, obj: QObject) -> QAccessibleInterface | None:
    role = getattr(type(obj), "ACCESSIBLE_ROLE", None)
    if role is None or not isinstance(obj, QWidget):
        return None  # Qt's own interface
    return QAccessibleWidget(obj, role)


def install_roles() -> None:
    """Once per process, before the first window (Qt asks factories first)."""
    global _installed
    if not _installed:
        QAccessible.installFactory(_interface)
        _installed = True
