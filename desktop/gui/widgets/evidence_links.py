"""An answer's figures, quoted phrases and names that its images hold, made links (issue 40):
a click (or Tab and Enter) opens the image viewer on the image that holds the words, with
every line the answer quotes outlined and the words' line flashed. The answer's text is not
touched: the links are laid on its rendered prose (markdown_view.add_links), never on code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot

from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.markdown_view import MarkdownView, TextLink
from desktop.gui.widgets.messages import ChatActions
from desktop.gui.widgets.outlines import Corners, Marks

if TYPE_CHECKING:  # the OCR package is not loaded at start
    from desktop.core.evidence import Evidence

LINK_SCHEME = "evidence"  # href "evidence:<n>": the answer's evidence line n
LINK_TOOLTIP = "Show on the image"


class EvidenceLinks(QObject):
    """The links of one answer's card and what a click on one shows."""

    def __init__(self, view: MarkdownView, actions: ChatActions) -> None:
        super().__init__(view)
        self.setObjectName("evidenceLinks")
        self._actions = actions
        self._evidence: Evidence | None = None
        self._images: Sequence[ImageRef] = ()
        self._regions: Sequence[tuple[Corners, ...]] = ()
        view.link_activated.connect(self.open)

    def set_evidence(
        self,
        answer: str,
        evidence: Evidence,
        images: Sequence[ImageRef],
        regions: Sequence[tuple[Corners, ...]],
    ) -> None:
        """`answer`: the text `evidence` was found for; `images`: its question's, in order;
        `regions`: each image's region boxes."""
        from desktop.core.evidence import evidence_links

        self._evidence, self._images, self._regions = evidence, images, regions
        view = self.parent()
        assert isinstance(view, MarkdownView)
        links = [
            TextLink(link.text, f"{LINK_SCHEME}:{link.line}")
            for link in evidence_links(answer, evidence)
            if evidence.lines[link.line].image < len(images)
        ]
        view.set_links(links, LINK_TOOLTIP)

    @Slot(str)
    def open(self, href: str) -> None:
        """Shows the line of `href` ("evidence:<n>") flashed on its image."""
        scheme, _, number = href.partition(":")
        if scheme != LINK_SCHEME or not number.isdigit() or self._evidence is None:
            return
        lines = self._evidence.lines
        if int(number) >= len(lines):
            return
        line = lines[int(number)]
        if line.image >= len(self._images):
            return
        quoted = tuple(e.box for e in lines if e.image == line.image)
        regions = self._regions[line.image] if line.image < len(self._regions) else ()
        self._actions.view_marked.emit(self._images[line.image], Marks(regions, quoted, line.box))


def link_evidence(
    view: MarkdownView,
    answer: str,
    evidence: Evidence,
    images: Sequence[ImageRef],
    regions: Sequence[tuple[Corners, ...]],
    actions: ChatActions,
) -> None:
    """Makes the words of `answer` (shown in `view`) that `evidence` holds links (again,
    when it is looked up again)."""
    links = view.findChild(EvidenceLinks, "evidenceLinks")
    if not isinstance(links, EvidenceLinks):
        links = EvidenceLinks(view, actions)
    links.set_evidence(answer, evidence, images, regions)
