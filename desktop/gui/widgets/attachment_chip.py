"""An attached image in the composer: a thumbnail with a remove button, in the Tab order
before the question box (issue 55: it could not take the focus, so its menu was mouse-only)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QAction, QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QToolButton, QWidget

from desktop.core.regions import Region
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.basics import Thumbnail
from desktop.gui.widgets.region_picker import regions_said

ATTACHMENT_EDGE = 64
MIN_CHIP_HEIGHT = 28  # the remove button needs it, whatever the picture's shape


class AttachmentChip(Thumbnail):
    """An attached image with a remove button."""

    remove_requested = Signal(ImageRef)

    def __init__(self, ref: ImageRef) -> None:
        super().__init__(ref, ATTACHMENT_EDGE)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(MIN_CHIP_HEIGHT)
        self.close_button = QToolButton(self)
        self.close_button.setText("×")
        self.close_button.setObjectName("chipClose")
        self.close_button.setToolTip(f"Remove {ref.name}")
        self.close_button.setAccessibleName(f"Remove {ref.name}")
        self.close_button.setFixedSize(QSize(18, 18))
        self.close_button.clicked.connect(lambda: self.remove_requested.emit(self.ref))
        remove = QAction("Remove", self)
        remove.triggered.connect(lambda: self.remove_requested.emit(self.ref))
        self.addAction(remove)
        self._tip = self.toolTip()

    def show_regions(self, regions: tuple[Region, ...]) -> None:
        """The boxes outlined, and said: the outline alone is tiny, and no screen reader's."""
        super().show_regions(regions)
        said = regions_said(len(regions)) if regions else ""
        self.setAccessibleName(f"Image {self.ref.name}" + (f", {said}" if said else ""))
        them = "it" if len(regions) == 1 else "them"
        note = f"\n{said} marked: the next question is about {them}." if said else ""
        self.setToolTip(self._tip + note)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.close_button.move(self.width() - self.close_button.width() - 2, 2)


def order_tabs(strip: QWidget, chips: Sequence[AttachmentChip], editor: QWidget) -> None:
    """Tab goes from what precedes the question box through each chip and its ×, then into
    the box (a chip added later was put at the end of the window's Tab order)."""
    chain: list[QWidget] = [w for chip in chips for w in (chip, chip.close_button)]
    if not chain:
        return
    before: QWidget | None = editor.previousInFocusChain()
    while before is not None and (before is strip or strip.isAncestorOf(before)):
        before = before.previousInFocusChain()
    order = [before, *chain] if before is not None else chain
    for first, second in zip(order, [*order[1:], editor], strict=True):
        QWidget.setTabOrder(first, second)
