"""OcrEngine: the one object the GUI, the CLI and the batch runner use to read text."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from desktop.core.images import LoadedImage, load_image
from desktop.core.ocr.codes import OcrCode, find_codes
from desktop.core.ocr.detection_scale import DetectorSettings
from desktop.core.ocr.empty_cells import read_empty_cells
from desktop.core.ocr.int8_check import Reading, Verdict, checked
from desktop.core.ocr.layout import arrange
from desktop.core.ocr.model_files import (
    OcrModelFiles,
    Precision,
    compiled_cache_dir,
    find_model_files,
)
from desktop.core.ocr.models import OcrResult, TextFragment
from desktop.core.ocr.panes import PaneRule, find_pane_rules
from desktop.core.ocr.ppocr import PpOcr
from desktop.core.ocr.ruled_tables import TableGrid, find_table_grids
from desktop.core.ocr.strips import check_readable

# Recognizer input widths (lines scaled to its 48 px height) primed by a thorough warm-up:
# every line of the benchmark's screenshots fits (widest: 3,572, small text across 1366 px);
# a longer line pays the first-time cost of its width once.
PRIMED_LINE_WIDTH = 3584


# Pages up to this size have their marks found beside the models; a larger page's after
# them, as their masks would add to the detector's activations (a 100 MP page peaked 185 MB
# higher, bench/RESULTS.md "Hostile inputs"), where the time they save is lost in the noise.
MARKS_BESIDE_PIXELS = 8_000_000

# After a page this large (beyond any screen: 8K is 33 MP) the detector's buffers, sized for it,
# are given back: how much they hold depends on the CPU's kernels and the models' precision,
# and costs ~0.2 s to give back and to allocate again, lost in such a page's time (issue 56).
RELEASE_ABOVE_PIXELS = 36_000_000

log = logging.getLogger(__name__)


def _codes_of(gray: np.ndarray, source_name: str) -> list[OcrCode]:
    """The page's codes; a failure of the code search (the reader's limits, its memory)
    costs the codes only, never the text read."""
    try:
        return find_codes(gray)
    except Exception as exc:  # zxing-cpp's limits, its memory: any of them
        log.warning("QR code and barcode search skipped on %s: %s", source_name or "a page", exc)
        return []


@dataclass(frozen=True)
class PageMarks:
    """What a page's pixels show besides its text, found from the pixels alone: drawn table
    grids and pane rules (for the layout; none on a page without text) and codes."""

    grids: list[TableGrid]
    codes: list[OcrCode]
    panes: list[PaneRule]


def page_marks(gray: np.ndarray, source_name: str, *, layout: bool = True) -> PageMarks:
    """The marks of a greyscale page; the grids and pane rules only for a `layout`."""
    grids = find_table_grids(gray) if layout else []
    panes = find_pane_rules(gray) if layout else []
    return PageMarks(grids, _codes_of(gray, source_name), panes)


NO_MARKS = PageMarks([], [], [])


class OcrEngine:
    """Fast OCR with layout. Cheap to create; the models compile on first use or `warm_up()`.

    One instance is meant to live for the whole session and serve one worker thread at a
    time; calls from several threads are serialised.
    """

    def __init__(
        self,
        threads: int | None = None,
        *,
        precision: Precision = "auto",
        detector: DetectorSettings | None = None,
        use_angle_classifier: bool = False,
        model_files: OcrModelFiles | None = None,
    ) -> None:
        """`precision` "auto" (the default) uses INT8 where this CPU's check found it reads as
        FP32 (`int8_check.py`); "int8" the INT8 models unchecked (to measure them);
        `model_files` these files, unchecked."""
        # The angle classifier only fixes upside-down lines, which screenshots never have;
        # skipping it is faster and avoids its false flips of upright text.
        self.threads = threads
        self.precision = precision
        self.detector = detector or DetectorSettings()
        self.use_angle_classifier = use_angle_classifier
        self.model_files = model_files  # known once the models are loaded
        self.int8_verdict: Verdict | None = None  # "auto" with INT8 models: this CPU's check
        self._models: PpOcr | None = None
        self._lock = threading.Lock()
        # The page's marks are found here while the models read: the cores are not busy all
        # the time then (the recognizer's last lines, the Python between the models' calls).
        self._marks = ThreadPoolExecutor(1, thread_name_prefix="ocr-marks")

    def warm_up(self, *, every_width: bool = False) -> None:
        """Compile the models and run them on lines of several lengths, so that the first
        real request meets compiled models and input shapes it has seen (a new shape costs
        about twice a known one). `every_width` also primes every line width a screenshot
        usually has (~2 s more; for a long-lived engine such as `desklens serve`)."""
        sample = Image.new("RGB", (1000, 200), "white")
        draw, font = ImageDraw.Draw(sample), ImageFont.load_default(16)
        for number, words in enumerate((1, 3, 6, 9)):
            line = " ".join(["DeskLens 123"] * words)
            draw.text((10, 10 + 45 * number), line, font=font, fill="black")
        self.extract(sample)
        if every_width:
            self._ppocr().prime_recognizer(PRIMED_LINE_WIDTH)

    def extract(self, image: LoadedImage | Image.Image, *, name: str | None = None) -> OcrResult:
        """Read all text of an image, in reading order. Raises ImageError for unusable input."""
        loaded = image if isinstance(image, LoadedImage) else load_image(image, name=name)
        check_readable(loaded.size, self.detector.max_side, self.detector.min_side, loaded.name)
        started = time.perf_counter()
        size, label = loaded.size, name or loaded.name
        # One copy of the pixels, turned into the models' BGR in place (a 100 MP image is
        # 300 MB per copy, 400 MB as a PIL image; the grey page for tables and codes is taken
        # first). Dropping our references frees the PIL image of a file read for this call.
        pixels = np.array(loaded.image)
        del image, loaded
        gray = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)
        cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR, dst=pixels)
        unsure: list[TextFragment] = []
        beside = gray.size <= MARKS_BESIDE_PIXELS
        finding = self._marks.submit(page_marks, gray, label) if beside else None
        with self._lock:
            fragments = self._ppocr().read(pixels, self.detector, unsure)
            if size[0] * size[1] > RELEASE_ABOVE_PIXELS:
                self._ppocr().release_memory()
        del pixels
        marks = finding.result() if finding else page_marks(gray, label, layout=bool(fragments))
        result = self.result_from_fragments(
            fragments, size, started=started, source_name=label, marks=marks
        )
        with self._lock:
            found = read_empty_cells(result, gray, self._ppocr().read_crops)
        if found:  # glyphs the detector missed in tables' empty cells: lay out again
            result = self.result_from_fragments(
                fragments + found, size, started=started, source_name=label, marks=marks
            )
        result.unsure_lines = len(unsure)
        return result

    @staticmethod
    def result_from_fragments(
        fragments: list[TextFragment],
        size: tuple[int, int],
        *,
        started: float,
        source_name: str,
        gray: np.ndarray | None = None,
        marks: PageMarks | None = None,
    ) -> OcrResult:
        """Lay fragments out with the page's `marks`, or those found in `gray` (the page's
        pixels; none without it)."""
        if marks is None:
            marks = (
                NO_MARKS if gray is None else page_marks(gray, source_name, layout=bool(fragments))
            )
        codes = marks.codes
        grids, panes = (marks.grids, marks.panes) if fragments else ([], [])
        layout = arrange(_outside_codes(fragments, codes), grids, panes)
        return OcrResult(
            lines=layout.lines,
            width=size[0],
            height=size[1],
            seconds=time.perf_counter() - started,
            source_name=source_name,
            tables=layout.tables,
            codes=codes,
        )

    def _ppocr(self) -> PpOcr:
        if self._models is None:
            files = self.model_files or find_model_files(self.precision)
            checking: dict[OcrModelFiles, OcrEngine] = {}
            if self.model_files is None and self.precision == "auto" and files.precision == "int8":

                def read(models: OcrModelFiles, images: Sequence[Image.Image]) -> list[Reading]:
                    if models not in checking:  # one engine at a time: the peak stays low
                        checking.clear()
                        checking[models] = self._sibling(models)
                    engine = checking[models]
                    return [_reading(engine.extract(image)) for image in images]

                files, self.int8_verdict = checked(files, find_model_files("fp32"), read)
            self.model_files = files
            used = checking.get(files)  # the check's last engine may have these models
            self._models = used._ppocr() if used else self._load(files)
        return self._models

    def _load(self, files: OcrModelFiles) -> PpOcr:
        return PpOcr(
            files,
            threads=self.threads,
            use_angle_classifier=self.use_angle_classifier,
            cache_dir=compiled_cache_dir(),
        )

    def _sibling(self, files: OcrModelFiles) -> OcrEngine:
        """An engine like this one on other model files (the INT8 check's)."""
        return OcrEngine(
            self.threads,
            detector=self.detector,
            use_angle_classifier=self.use_angle_classifier,
            model_files=files,
        )


def _reading(result: OcrResult) -> Reading:
    cells = tuple(tuple(tuple(row) for row in table.rows) for table in result.tables)
    return Reading(result.text(), cells)


def _outside_codes(fragments: list[TextFragment], codes: list[OcrCode]) -> list[TextFragment]:
    """The fragments whose middle lies outside every decoded code: what the recognizer reads
    off a code's modules ("1", "國") is not text."""

    def inside(fragment: TextFragment, box: tuple[int, int, int, int]) -> bool:
        x = (fragment.box[0] + fragment.box[2]) / 2
        y = (fragment.box[1] + fragment.box[3]) / 2
        return box[0] <= x <= box[2] and box[1] <= y <= box[3]

    return [f for f in fragments if not any(inside(f, code.box) for code in codes)]
