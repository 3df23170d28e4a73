"""PP-OCR text detection and recognition on OpenVINO, with the models shipped in rapidocr's wheel.

We drive the models ourselves rather than through `rapidocr.RapidOCR`, because:

* its OpenVINO session always passes through its downloader (which only skips when the file's
  sha256 matches); DeskLens must never touch the network, so we open the files directly;
* it cannot set the inference precision, and f32 ran recognition ~1.8x faster than the bf16
  default on AVX-512 CPUs without AMX (measured on the project's build machine);
* it reads lines one batch at a time on one stream; we read them on parallel streams;
* it crops text lines from its downscaled working copy; we crop from the original pixels.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
import openvino as ov

from desktop.core.ocr.ctc import CtcRead
from desktop.core.ocr.detection_scale import (
    DetectorSettings,
    detect_at_readable_scale,
)
from desktop.core.ocr.marks import dashes_settled
from desktop.core.ocr.model_files import OcrModelFiles
from desktop.core.ocr.model_inputs import (
    REC_BATCH,
    REC_HEIGHT,
    detector_input,
    normalise,
    rec_width,
)
from desktop.core.ocr.models import TextFragment
from desktop.core.ocr.recognizer import Read, Recognizer, read_model
from desktop.core.ocr.strips import join_tiled_boxes, plan_tiles, split_wide_crop
from desktop.core.ocr.text_boxes import crop_lines, crop_shape, text_quads
from desktop.core.ocr.wide_gaps import capital_height, line_fragments, with_margin

CLS_SHAPE = (48, 192)  # the angle classifier's input height and width
MIN_CONFIDENCE = 0.5  # rapidocr's default text_score: below it, reads are mostly noise
MARGIN_FLOOR = 0.4  # a read a margin may change to another text (PpOcr._read_with_margins)
# A short read this sure is not read again with a margin: on the 28 benchmark styles' tuning
# pages no such re-read (55 of 59) changed a text, and they were a third of a chart's reads.
MARGIN_SURE = 0.95
# With INT8 models, the FP32 recognizer reads again what INT8 is unsure of: a lone character
# (no word around to settle it: a table cell's "0" read "O", a lone "-" read "." with AMX) and a
# read this near MIN_CONFIDENCE, which keeps or drops the line (issue 56). Few lines are either.
REREAD_BELOW = 0.65


class PpOcr:
    """Compiled detector + recognizer (+ optional angle classifier); not thread-safe by itself."""

    def __init__(
        self,
        files: OcrModelFiles,
        *,
        threads: int | None = None,
        use_angle_classifier: bool = False,
        cache_dir: Path | None = None,
    ) -> None:
        """`cache_dir` keeps compiled models between runs (compiling takes ~1 s)."""
        config: dict[str, str] = {"INFERENCE_PRECISION_HINT": "f32"}
        if threads:
            config["INFERENCE_NUM_THREADS"] = str(threads)
        core = ov.Core()
        if cache_dir is not None and _writable(cache_dir):
            core.set_property({"CACHE_DIR": str(cache_dir)})
        # One after the other, never side by side: OpenVINO's import from CACHE_DIR sets the
        # process locale to "C" and back, so two at once left LC_CTYPE at "C" in 7 of 10
        # tries (Python then decodes pipes and files as ASCII).
        self._core, self._config = core, config
        self._reference_path = files.rec_reference
        self._reference: Recognizer | None = None
        self._det = _compile(core, files.det, config)
        self._cls = _compile(core, files.cls, config) if use_angle_classifier else None
        # Lines are independent: one single-threaded stream per core reads them in parallel,
        # without the threads of one request waiting on each other. On the 2-core build
        # machine, busy with other work, this read a page 2.7x faster than one 2-thread
        # request.
        streams = {"PERFORMANCE_HINT": "THROUGHPUT"}
        if threads:
            streams["NUM_STREAMS"] = str(threads)
        self._main = Recognizer.compile(core, files.rec, config, streams)
        self._workers = ThreadPoolExecutor(
            len(self._main.requests), thread_name_prefix="ocr-recognizer"
        )

    def read(
        self,
        bgr: np.ndarray,
        settings: DetectorSettings,
        unsure: list[TextFragment] | None = None,
    ) -> list[TextFragment]:
        """Detect and read every text line of a BGR uint8 image. The lines found but read
        below MIN_CONFIDENCE (often a script the recognizer has no characters for) are left
        out, and appended to `unsure` when it is given."""
        quads = self.detect(bgr, settings)
        crops = crop_lines(bgr, quads)
        if self._cls is not None:
            self._upright(quads, crops)
        reads = self._read_with_margins(crops)
        self._either_way_up(quads, crops, reads)
        capital = capital_height([text for text, _, _ in reads], crops)
        kept: list[TextFragment] = []
        for quad, crop, read in zip(quads, crops, reads, strict=True):
            text, score, _ = read
            if score >= MIN_CONFIDENCE and text.strip():
                kept += line_fragments(quad, crop, read, capital)
            elif unsure is not None:
                unsure.append(TextFragment(text, tuple(map(tuple, quad.tolist())), score))
        return kept

    def _either_way_up(
        self, quads: list[np.ndarray], crops: list[np.ndarray], reads: list[Read]
    ) -> None:
        """A vertical line is turned to read left to right as if it ran bottom to top; one
        that runs top to bottom (a margin note, a spine) read as garbage then ("Macl com" for
        an e-mail address, which redaction missed). Each turned crop is read turned around
        too, and the surer read kept with its quad in the same order (rolled by two corners,
        as the crop is by 180 degrees). Only vertical lines pay: a page has few."""
        turned = [i for i, crop in enumerate(crops) if crop.shape[:2] != crop_shape(quads[i])]
        if not turned:
            return
        around = [_turned_around(quads[i], crops[i]) for i in turned]
        crops_around = [crop for _, crop in around]
        again = self._read_with_margins(crops_around)
        for index, (quad, crop), read in zip(turned, around, again, strict=True):
            if read[1] > reads[index][1]:
                quads[index], crops[index], reads[index] = quad, crop, read

    def read_crops(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """(text, confidence) of line crops, a short one read with a margin where that is
        surer."""
        return [(text, score) for text, score, _ in self._read_with_margins(list(crops))]

    def _read_with_margins(self, crops: list[np.ndarray]) -> list[Read]:
        """`_read_lines`; a crop of one or two characters read below MARGIN_SURE is read again
        with a margin (`with_margin`) and the surer read kept: a lone dash went from 0.34 to
        0.6-0.9. It may change the text only over a read that saw a glyph (MARGIN_FLOOR): a
        chart's marker read as "R" at 0.26 became "9" at 0.82, a toggle's knob a dot, then
        "O". A dash read as "." is told apart by its ink (`marks.dashes_settled`)."""
        reads = self._read_lines(crops)
        widened = {
            i: wide
            for i, crop in enumerate(crops)
            if reads[i][1] < MARGIN_SURE and (wide := with_margin(crop)) is not crop
        }
        again = self._read_lines(list(widened.values())) if widened else []
        for index, (text, score, _) in zip(widened, again, strict=True):
            plain, plain_score, _ = reads[index]
            if score > plain_score and (text == plain or plain_score >= MARGIN_FLOOR):
                reads[index] = text, score, None  # the margin moved its columns
        return [
            (dashes_settled(crop, text, columns), score, columns)
            for crop, (text, score, columns) in zip(crops, reads, strict=True)
        ]

    def detect(self, bgr: np.ndarray, settings: DetectorSettings) -> list[np.ndarray]:
        """Text line quadrilaterals (4x2 float32, clockwise from top-left) in image pixels.

        A long strip is read in tiles (`strips.py`): the detector never gets more than its
        cap. Raises ValueError for a strip too long to tile (OcrEngine refuses those first).
        """
        height, width = bgr.shape[:2]
        tiles = plan_tiles(height, width, settings.max_side, settings.min_side)
        found = [
            (
                tile,
                detect_at_readable_scale(
                    bgr[tile.top : tile.bottom, tile.left : tile.right],
                    settings,
                    lambda image, zoom: self._detect_once(image, settings, zoom),
                ),
            )
            for tile in tiles
        ]
        return join_tiled_boxes(found)

    def _detect_once(
        self, bgr: np.ndarray, settings: DetectorSettings, zoom: float
    ) -> tuple[list[np.ndarray], list[float]]:
        """Quadrilaterals in image pixels and their heights as the detector saw them."""
        view = detector_input(bgr, settings, zoom)
        self._det.infer([view.tensor])
        boxes = text_quads(self._det.get_output_tensor().data[0, 0])
        height, width = bgr.shape[:2]
        quads, heights = [], []
        for box in boxes:
            heights.append(float(np.linalg.norm(box[3] - box[0])))
            quad = (box - view.pad) / view.scale
            quad[:, 0] = quad[:, 0].clip(0, width - 1)
            quad[:, 1] = quad[:, 1].clip(0, height - 1)
            quads.append(quad.astype(np.float32))
        return quads, heights

    def _read_lines(self, crops: Sequence[np.ndarray]) -> list[Read]:
        """`recognize`, with crops wider than the recognizer's cap read in pieces and joined
        (the piece reads' mean confidence, weighted by their lengths); with the crop column
        of each character of a read of two or more that was read in one piece (else None)."""
        pieces, owners = [], []
        for owner, crop in enumerate(crops):
            for piece in split_wide_crop(crop, REC_HEIGHT):
                pieces.append(piece)
                owners.append(owner)
        joined: list[list[Read]] = [[] for _ in crops]
        for owner, read in zip(owners, self._recognize(pieces), strict=True):
            joined[owner].append(read)
        return [_join_reads(reads) for reads in joined]

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """(text, confidence) for each BGR line crop, in the order given."""
        return [(text, score) for text, score, _ in self._recognize(crops)]

    def _recognize(self, crops: Sequence[np.ndarray]) -> list[Read]:
        """Reads by the recognizer; with INT8 models, a read with a look-alike in doubt
        (`ctc.LOOK_ALIKE_DOUBT`) or unsure (`_unsure`) is read again (`_read_again`)."""
        gate = _unsure if self._reference_path is not None else None
        reads, unsure = self._main.read(crops, self._workers, gate)
        if unsure:
            self._read_again(crops, reads, unsure)
        return reads

    def _read_again(self, crops: Sequence[np.ndarray], reads: list[Read], lines: list[int]) -> None:
        """Replace the reads of `lines` by the FP32 recognizer's (INT8 models only)."""
        reference = self._reference_recognizer()
        if reference is not None:
            again, _ = reference.read([crops[index] for index in lines], self._workers, None)
            for index, read in zip(lines, again, strict=True):
                reads[index] = read

    def _reference_recognizer(self) -> Recognizer | None:
        """The FP32 recognizer INT8 models defer to on a look-alike in doubt, compiled on first
        need (a few lines in a hundred pages); None for FP32 models."""
        if self._reference_path is not None and self._reference is None:
            reference = Recognizer.compile(self._core, self._reference_path, self._config, {})
            if not reference.same_kind(self._main):  # another kind of model: no opinion
                self._reference_path = None
                return None
            self._reference = reference
        return self._reference

    def release_memory(self) -> None:
        """Gives back the detector's intermediate buffers: OpenVINO keeps them sized for the
        largest input it has met (a 100-megapixel page's 2080 x 2080 held ~870 MiB in FP32,
        ~14 MiB in INT8 on an AVX2 CPU; they are allocated again, for the next input's size,
        on the next page)."""
        self._det.get_compiled_model().release_memory()

    def prime_recognizer(self, max_width: int) -> None:
        """Meet every padded line width up to `max_width` once on every stream, ahead of the
        first real page (`Recognizer.prime`)."""
        self._main.prime(max_width, self._workers)

    def _upright(self, quads: list[np.ndarray], crops: list[np.ndarray]) -> None:
        """Turns the crops the classifier reads as upside down (label "180", p > 0.9) right
        way up, with their quads."""
        assert self._cls is not None
        height, width = CLS_SHAPE
        for start in range(0, len(crops), REC_BATCH):
            chunk = crops[start : start + REC_BATCH]
            tensor = np.zeros((len(chunk), 3, height, width), dtype=np.float32)
            for row, crop in enumerate(chunk):
                fitted = min(width, rec_width(crop))
                tensor[row, :, :, :fitted] = normalise(cv2.resize(crop, (fitted, height)))
            self._cls.infer([tensor])
            probabilities = self._cls.get_output_tensor().data
            for row, (_, flipped) in enumerate(probabilities):
                if flipped > 0.9:
                    at = start + row
                    quads[at], crops[at] = _turned_around(quads[at], crops[at])


def _turned_around(quad: np.ndarray, crop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A crop turned by 180 degrees, and its quad rolled by two corners to match: its first
    corner stays the top-left of the text, so the columns of a word map back onto the page
    where that word is (`line_fragments`)."""
    return np.roll(quad, 2, axis=0), cv2.rotate(crop, cv2.ROTATE_180)


def _unsure(read: CtcRead) -> bool:
    """INT8's read the FP32 recognizer reads again."""
    return read.doubt or len(read.text.strip()) == 1 or read.score < REREAD_BELOW


def _join_reads(reads: list[Read]) -> Read:
    if len(reads) == 1:
        return reads[0]
    text = "".join(text for text, _, _ in reads)
    weight = sum(len(text) for text, _, _ in reads)
    score = sum(len(text) * score for text, score, _ in reads) / weight if weight else 0.0
    return text, score, None


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False  # a read-only profile: compile each time instead
    return os.access(folder, os.W_OK)


def _compile(core: ov.Core, path: Path, config: dict[str, str]) -> ov.InferRequest:
    return core.compile_model(read_model(core, path), "CPU", config).create_infer_request()
