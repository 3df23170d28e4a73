"""The readability guard's bar above the composer: one sentence saying that an attached
image's text will be too small for the model after its resize, with the remedies in place
(desktop/gui/flows/legibility_check.py decides when it shows and what the buttons do)."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QWidget

from desktop.gui.widgets.basics import flat_button, text_label


class LegibilityBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("notice")  # the notice banner's look: a note, not an error
        self.setProperty("kind", "info")
        self.setAccessibleName("Text too small")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(14, 8, 6, 8)
        self.label = text_label()
        layout.addWidget(self.label, 1)
        self.detail_button = flat_button("More detail")
        self.region_button = flat_button(
            "Ask about a region…", "Draw a box around the text: the model reads it at its own size"
        )
        self.ground_button = flat_button(
            "Use the extracted text", "Give the model the fast-OCR text with the question"
        )
        self.close_button = flat_button("×", "Dismiss", "Dismiss the warning")
        self.close_button.clicked.connect(self.hide)
        for button in (self.detail_button, self.region_button, self.ground_button):
            layout.addWidget(button)
        layout.addWidget(self.close_button)
        self.hide()

    def text(self) -> str:
        """The sentence shown ("" while hidden)."""
        parent = self.parentWidget()
        return self.label.text() if parent is not None and self.isVisibleTo(parent) else ""

    def show_warning(self, sentence: str, detail_tokens: int | None) -> None:
        """`detail_tokens`: the budget "More detail" asks with (None: no budget would do)."""
        self.label.setText(sentence)
        self.detail_button.setVisible(detail_tokens is not None)
        if detail_tokens is not None:
            self.detail_button.setToolTip(
                f"Read the image at {detail_tokens} visual tokens for this question only "
                "(slower to read; Settings > Image detail stays as it is)"
            )
        self.show()
