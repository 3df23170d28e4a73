"""Small building blocks shared by the message widgets, the composer and the panels."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAccessible,
    QContextMenuEvent,
    QCursor,
    QGuiApplication,
    QIcon,
    QKeyEvent,
    QMouseEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.core.regions import Region
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.outlines import Corners, Marks, outlined
from desktop.gui.widgets.thumbnails import thumbnail

COPIED_FEEDBACK_MS = 1200


def count_of(count: int, singular: str, plural: str | None = None) -> str:
    """ "1 line", "2 lines": the word that goes with the number."""
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def flat_button(text: str, tooltip: str = "", accessible: str | None = None) -> QToolButton:
    """A borderless text button for secondary actions (Copy, Save as...)."""
    button = QToolButton()
    button.setText(text)
    button.setProperty("role", "flat")
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    button.setToolTip(tooltip or text)
    button.setAccessibleName(accessible or text)
    button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    return button


def push_button(text: str, role: str | None = None, tooltip: str = "") -> QPushButton:
    button = QPushButton(text)
    if role:
        button.setProperty("role", role)
    button.setCursor(Qt.CursorShape.PointingHandCursor)
    button.setAccessibleName(text.replace("&", ""))
    if tooltip:
        button.setToolTip(tooltip)
    return button


def ok_cancel_buttons(dialog: QDialog) -> QDialogButtonBox:
    """OK (the primary button) and Cancel, wired to accept and reject `dialog`."""
    box = QDialogButtonBox(
        QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
    )
    for button in box.buttons():
        button.setIcon(QIcon())  # Fusion's stock icons clash with the flat look
    set_role(box.button(QDialogButtonBox.StandardButton.Ok), "primary")
    box.accepted.connect(dialog.accept)
    box.rejected.connect(dialog.reject)
    return box


def release_after_menu(button: QPushButton | QToolButton) -> None:
    """A button that pops up a menu looks pressed (hovered) after the menu closes: the menu
    took the mouse, so the button never heard it leave. It is told, unless the pointer is
    really back over it."""
    menu = button.menu()
    if menu is None:
        return

    def leave() -> None:
        if not button.rect().contains(button.mapFromGlobal(QCursor.pos())):
            QApplication.sendEvent(button, QEvent(QEvent.Type.Leave))
            button.setAttribute(Qt.WidgetAttribute.WA_UnderMouse, False)
            button.setDown(False)
            button.update()

    menu.aboutToHide.connect(lambda: QTimer.singleShot(0, button, leave))


def bring_to_front(window: QWidget) -> None:
    """Shows the window (restored if minimised) in front of the others, with the focus."""
    if window.isMinimized():
        window.showNormal()
    window.show()
    window.raise_()
    window.activateWindow()
    handle = window.windowHandle()
    if handle is not None:
        handle.requestActivate()  # some X11 window managers heed only this


def set_role(widget: QWidget, role: str) -> None:
    """Changes a widget's style role; the style sheet is re-applied to it."""
    widget.setProperty("role", role)
    widget.style().unpolish(widget)
    widget.style().polish(widget)


def copy_to_clipboard(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


def copy_button(text_of: Callable[[], str], what: str = "text") -> QToolButton:
    """Copies `text_of()` and says "Copied" for a moment."""
    button = flat_button("Copy", f"Copy the {what}", f"Copy {what}")

    def copy() -> None:
        copy_to_clipboard(text_of())
        button.setText("Copied")
        # The button as context: the timer is dropped if the message is deleted first.
        QTimer.singleShot(COPIED_FEEDBACK_MS, button, lambda: button.setText("Copy"))

    button.clicked.connect(copy)
    return button


def text_label(
    text: str = "", object_name: str | None = None, *, selectable: bool = True
) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if object_name:
        label.setObjectName(object_name)
    label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
    return label


class ElidedLabel(QLabel):
    """One line of plain text that gives way in a narrow window: it is cut with "…" rather
    than widening the window, and its tooltip then holds the whole text."""

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._full = ""
        self._tip = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def full_text(self) -> str:
        return self._full

    def text(self) -> str:
        """The whole text, as set (what is drawn may be cut: `shown_text`)."""
        return self._full

    def shown_text(self) -> str:
        return super().text()

    def set_tip(self, tip: str) -> None:
        """A tooltip of its own (the whole text is added to it while the text is cut)."""
        self._tip = tip
        self._elide()

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._full = text
        self._elide()
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        width = self.fontMetrics().horizontalAdvance(self._full) + 2 * self.margin() + 4
        return QSize(width, hint.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._elide()  # a style sheet's font arrives after the text

    def _elide(self) -> None:
        room = self.contentsRect().width()
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, room)
        super().setText(shown)
        tip = self._tip
        if shown != self._full and self._full not in tip:
            tip = f"{self._full}\n{tip}" if tip else self._full
        self.setToolTip(tip)


class Thumbnail(QFrame):
    """A clickable image preview; its context menu is filled by the owner."""

    clicked = Signal(ImageRef)
    ACCESSIBLE_ROLE = QAccessible.Role.Button  # a QFrame says "Border" (widgets/roles.py)

    def __init__(self, ref: ImageRef, edge: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ref = ref
        self.setObjectName("thumbnail")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(
            f"{ref.name} — {ref.size[0]} × {ref.size[1]} px\n"
            "Click to view; right-click to extract its text."
        )
        self.setAccessibleName(f"Image {ref.name}")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(3, 3, 3, 3)
        self.picture = QLabel()
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._edge = edge
        self.regions: tuple[Region, ...] = ()  # boxes drawn on it (regions of its image)
        self.evidence: tuple[Corners, ...] = ()  # the lines its question's answer quotes
        self.picture.setPixmap(thumbnail(ref, edge))
        layout.addWidget(self.picture)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        # Reachable from the keyboard: Tab stops on it (a ring in the theme's accent), Enter or
        # Space opens it, the Menu key or Shift+F10 its menu.
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)

    def show_regions(self, regions: tuple[Region, ...]) -> None:
        """Outlines `regions` (pixels of this image) on the picture; () shows it plain."""
        self.regions = regions
        self._outline()

    def show_evidence(self, lines: tuple[Corners, ...]) -> None:
        """Outlines the lines (their boxes in this image's pixels) an answer quotes."""
        self.evidence = lines
        self._outline()

    def marks(self) -> Marks:
        """What it outlines, for the image viewer to outline too."""
        return Marks(tuple(region.corners for region in self.regions), self.evidence)

    def _outline(self) -> None:
        layers = self.marks().layers()
        self.picture.setPixmap(outlined(thumbnail(self.ref, self._edge), self.ref.size[0], layers))

    def sizeHint(self) -> QSize:
        return self.picture.sizeHint() + QSize(8, 8)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key, shift = event.key(), event.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Space):
            self.clicked.emit(self.ref)
        elif key == Qt.Key.Key_Menu or (key == Qt.Key.Key_F10 and shift):
            centre = self.rect().center()
            QApplication.sendEvent(
                self,
                QContextMenuEvent(
                    QContextMenuEvent.Reason.Keyboard, centre, self.mapToGlobal(centre)
                ),
            )
        else:
            super().keyPressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.rect().contains(
            event.position().toPoint()
        ):
            self.clicked.emit(self.ref)
        super().mouseReleaseEvent(event)
