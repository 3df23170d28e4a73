"""The readability guard in the app (issue 40): before the model reads an attached image,
the fast OCR's line heights say whether its text survives the engine's resize
(desktop/core/legibility.py). When it would not, one sentence shows above the composer with the
remedies in place: "More detail" (this question's images read at a budget that keeps the text
readable: `GenerationSettings.max_visual_tokens`, the app's Settings untouched), "Ask about a
region…" (its crop is read at its own resolution), "Use the extracted text" (grounding).

Only for this computer's model: its resize is known (`ModelInfo.vision`); a server's is not.
Each picture is read once, off the GUI thread (`LineReader`: the chat's own extraction of the
same picture when it has one, else the fast OCR); the warning comes when the read does, and a
question sent before then is sent as it is, never held up. A read whose ticket is no longer
waited for (another chat opened) is dropped. The warning goes when a remedy makes the text
readable, when the image goes, and on Send (which empties the composer); dismissed, it stays
away until other images would be too small.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop.core.conversation import KnownRead
from desktop.gui.flows.asking import ChatParts
from desktop.gui.image_ref import ImageRef
from desktop.gui.widgets.legibility_bar import LegibilityBar
from desktop.gui.workers.engine_worker import EngineController
from desktop.gui.workers.line_reader import LineReader, LinesRead

if TYPE_CHECKING:  # the engine's and the OCR's modules load once a read arrives (a fast start)
    from desktop.core.engine.vision import VisionSpec
    from desktop.core.legibility import TextSize
    from desktop.core.ocr import OcrEngine
    from desktop.core.ocr.models import OcrResult

    _Checked = tuple[ImageRef, TextSize]


class LegibilityFlow(QObject):
    detail_changed = Signal()  # "More detail" changed the budget the next question asks with

    def __init__(
        self,
        parts: ChatParts,
        engine: EngineController,
        ocr_engine: Callable[[], OcrEngine],
        bar: LegibilityBar,
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self._parts, self._engine, self.bar = parts, engine, bar
        self.reader = LineReader(ocr_engine, self)
        self.reader.read.connect(self._on_read)
        self._reads: dict[str, OcrResult | None] = {}  # by picture (None: it could not be read)
        self.pending: dict[int, str] = {}  # the reads waited for: ticket -> picture
        self._detail: dict[str, int] = {}  # "More detail" budgets by picture, until sent
        self._warned: list[_Checked] = []  # what the bar shows now
        self._dismissed: frozenset[str] = frozenset()
        composer = parts.composer
        composer.attachments_changed.connect(self.update)
        composer.ground_check.toggled.connect(self.update)
        # After AskFlow's slots (made before this flow): the question took its budget.
        composer.send_requested.connect(self._on_sent)
        composer.preset_requested.connect(self._on_sent)
        engine.status_changed.connect(self.update)  # a model loaded (its resize known) or gone
        parts.session.opened.connect(self._on_opened)
        bar.detail_button.clicked.connect(self.more_detail)
        bar.region_button.clicked.connect(self.pick_region)
        bar.ground_button.clicked.connect(lambda: composer.ground_check.setChecked(True))
        bar.close_button.clicked.connect(self._on_dismissed)

    def detail_for(self, images: Sequence[ImageRef]) -> int | None:
        """The visual-token budget a question about `images` is asked with (None: the
        engine's own): the largest "More detail" chosen for any of them."""
        chosen = [self._detail[ref.digest] for ref in images if ref.digest in self._detail]
        return max(chosen, default=None)

    def known_reads(self, images: Sequence[ImageRef]) -> tuple[KnownRead, ...]:
        """The reads made here of `images`, for the question about them: grounded, it is
        put before it without the OCR reading the pictures again."""
        reads = ((ref.digest, self._reads.get(ref.digest)) for ref in images)
        return tuple(KnownRead(digest, result) for digest, result in reads if result is not None)

    @Slot()
    def update(self, *_args) -> None:
        """Reads what is not read yet, then shows or hides the warning."""
        spec = self._spec()
        images = self._parts.composer.attachments()
        if spec is None or not images:
            self._show([], None)
            return
        self._read(images)
        if self._parts.composer.ground_check.isChecked():
            self._show([], None)  # the model gets the text itself
            return
        tokens = self.detail_for(images)
        budget = spec.with_budget(tokens) if tokens is not None else spec
        small = [item for item in self._checked(budget, images) if item[1].too_small]
        self._show(small, self._helping_budget(spec, small))

    @Slot()
    def more_detail(self) -> None:
        """The warned images are read at budgets that keep their text readable, for the next
        question only."""
        for ref, size in self._warned:
            self._detail[ref.digest] = max(size.detail_tokens, self._detail.get(ref.digest, 0))
        self.detail_changed.emit()
        self.update()

    @Slot()
    def pick_region(self) -> None:
        """The box drawing on the image with the smallest text; the boxes drawn are checked."""
        if self._warned:
            ref = min(self._warned, key=lambda item: item[1].predicted_px)[0]
            self._parts.composer.pick_regions(ref).chosen.connect(self.update)

    # --- internals -----------------------------------------------------------------------

    def _spec(self) -> VisionSpec | None:
        status = self._engine.status
        model = status.model
        return model.vision if model is not None and not status.server else None

    def _read(self, images: Sequence[ImageRef]) -> None:
        """Starts the reads of the pictures neither read nor being read: from the chat's
        extraction of the same picture when it has one."""
        waited = set(self.pending.values())
        unread = [r for r in images if r.digest not in self._reads and r.digest not in waited]
        if not unread:
            return
        history = self._parts.session.transcript
        known = {read.digest: read.read for read in history.known_reads(unread)}
        for ref in unread:  # the composer holds each picture once
            self.pending[self.reader.submit(ref, known.get(ref.digest))] = ref.digest

    def _checked(self, budget: VisionSpec, images: Sequence[ImageRef]) -> list[_Checked]:
        """The text size of each read image under `budget`; of its regions instead when
        boxes are drawn on it (the model reads their crops)."""
        from desktop.core.legibility import line_heights, text_size

        found: list[_Checked] = []
        for ref in images:
            result = self._reads.get(ref.digest)
            if result is None:
                continue
            regions = self._parts.composer.marks.of(ref)
            sizes = [
                text_size(line_heights(result, r.corners), (r.width, r.height), ref.name, budget)
                for r in regions
            ] or [text_size(line_heights(result), ref.size, ref.name, budget)]
            found += [(ref, size) for size in sizes if size is not None]
        return found

    def _show(self, small: list[_Checked], detail_tokens: int | None) -> None:
        self._warned = small
        warned = frozenset(ref.digest for ref, _size in small)
        if not small or warned == self._dismissed:
            self.bar.hide()
            return
        self._dismissed = frozenset()
        worst = min(size.predicted_px for _ref, size in small)
        names = ", ".join(dict.fromkeys(ref.name for ref, _size in small))
        sentence = (
            f"The text in {names} will be about {worst:.0f} px tall after resizing — too small "
            "for the model to read."
        )
        self.bar.show_warning(sentence, detail_tokens)

    def _helping_budget(self, spec: VisionSpec, small: list[_Checked]) -> int | None:
        """The budget "More detail" would ask with, when it makes all their text readable
        (not when the text is too small at the image's own size already)."""
        if not small:
            return None
        tokens = max(size.detail_tokens for _ref, size in small)
        refs = list(dict.fromkeys(ref for ref, _size in small))
        rechecked = self._checked(spec.with_budget(tokens), refs)
        return None if any(size.too_small for _ref, size in rechecked) else tokens

    @Slot(object)
    def _on_read(self, read: LinesRead) -> None:
        if self.pending.pop(read.ticket, None) is None:
            return  # no longer waited for (another chat opened meanwhile)
        attached = {ref.digest for ref in self._parts.composer.attachments()}
        self._reads = {d: r for d, r in self._reads.items() if d in attached}  # bounded
        self._reads[read.digest] = read.result
        self.update()

    @Slot()
    def _on_dismissed(self) -> None:
        self._dismissed = frozenset(ref.digest for ref, _size in self._warned)

    @Slot()
    def _on_sent(self, *_args) -> None:
        self._detail.clear()  # the question took it; the next one asks at the usual budget
        self._dismissed = frozenset()

    @Slot(object)
    def _on_opened(self, _chat: object) -> None:
        self.pending.clear()  # another chat's reads: dropped when they come
        self.update()
