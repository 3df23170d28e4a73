"""Would PP-OCRv6 tiny recognition pay as the first reader of a cascade (issue 57)? On the same
line crops (the small detector's, one page per OCR benchmark style), the small recognizer and
the tiny one read every line, alternating page by page in one process; then, for each gate
(the tiny read's least sure character, a dropped character's mass at a blank step, a read of
one character, a look-alike in doubt), how much of the text the small recognizer would have
to read again and how many lines the cascade would still read otherwise than today.

    .venv/bin/python bench/ocr_cascade.py [--seed 7] [--write]   # every style (~10 min)
    .venv/bin/python bench/ocr_cascade.py --smoke                # one style (CI)

The tiny recognizer comes from `python -m devkit.ocr_tiny fetch`. A cascade's time is
computed from the measured parts, not measured end to end: tiny on every line, plus the small
recognizer's time times the share of the text (by characters) its gate sends on.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from results import publish  # noqa: E402  (bench/ is on sys.path)
from smoke import add_smoke_options, check_smoke  # noqa: E402

from bench.cascade_words import Detail, detail_of, splice, unsure_spans  # noqa: E402
from bench.ocr_baseline import STYLES, TUNING_SEED, gate_samples  # noqa: E402
from desktop.core.ocr.ctc import CtcRead, ctc_decode  # noqa: E402
from desktop.core.ocr.detection_scale import DetectorSettings  # noqa: E402
from desktop.core.ocr.model_files import find_model_files  # noqa: E402
from desktop.core.ocr.model_inputs import recognizer_inputs  # noqa: E402
from desktop.core.ocr.ppocr import PpOcr  # noqa: E402
from desktop.core.ocr.recognizer import Recognizer  # noqa: E402
from desktop.core.ocr.text_boxes import crop_lines  # noqa: E402
from devkit.ocr_tiny import find_tiny_recognizer  # noqa: E402

HEADING = "## OCR cascade: PP-OCRv6 tiny recognition first (issue 57)"
# (least character probability under which, dropped-character mass over which) the small
# recognizer reads the line again; a one-character read and a look-alike in doubt always.
GATES = [(0.6, 1.1), (0.7, 0.5), (0.8, 0.5), (0.8, 0.3), (0.9, 0.3)]
# The same features per word (`cascade_words.py`): the small recognizer reads the words again.
WORD_GATES = [(0.8, 0.3), (0.9, 0.3), (0.95, 0.2)]


@dataclass(frozen=True)
class Line:
    style: str
    small: str
    tiny: CtcRead
    detail: Detail

    @property
    def dropped(self) -> float:
        """The most non-blank probability at a step the tiny read left blank: a character it
        dropped ("23/1/2025" for "23/11/2025") leaves a blank step with a high one."""
        return float(self.detail.dropped.max()) if len(self.detail.dropped) else 0.0


@dataclass
class WordRun:
    """One word gate's tally: the pieces the small recognizer read again, and the result."""

    least: float
    dropped: float
    pieces: int = 0
    width: int = 0  # the pieces' columns
    seconds: float = 0.0
    otherwise: int = 0  # lines read otherwise than today
    spaces_only: int = 0  # of those, in spaces only


def read_all(
    recognizer: Recognizer, crops: list[np.ndarray], workers: ThreadPoolExecutor
) -> tuple[list[CtcRead], list[Detail], float]:
    """Each crop's CtcRead and Detail, and the seconds the app's read of the crops took (on
    the recognizer's streams; the features come from a second, untimed pass)."""
    started = time.perf_counter()
    timed, _ = recognizer.read(crops, workers, None)
    seconds = time.perf_counter() - started
    found: dict[int, tuple[CtcRead, Detail]] = {}
    request = recognizer.requests[0]
    for indices, tensor in recognizer_inputs(crops):
        request.infer([tensor])
        for index, scores in zip(indices, request.get_output_tensor().data, strict=True):
            read = ctc_decode(
                scores,
                recognizer.alphabet,
                logits=recognizer.logits,
                look_alikes=recognizer.look_alikes,
            )
            found[index] = read, detail_of(scores, tensor.shape[-1], crops[index])
    reads = [found[index][0] for index in range(len(crops))]
    assert [text for text, _, _ in timed] == [read.text for read in reads]
    return reads, [found[index][1] for index in range(len(crops))], seconds


def sent_on(line: Line, least: float, dropped: float) -> bool:
    tiny = line.tiny
    return tiny.doubt or len(tiny.text.strip()) <= 1 or tiny.least < least or line.dropped > dropped


def read_words_again(
    run: WordRun,
    lines: list[Line],
    crops: list[np.ndarray],
    small: Recognizer,
    workers: ThreadPoolExecutor,
) -> None:
    """The small recognizer reads the unsure words of each tiny read (a read of one character
    or with a look-alike in doubt: its whole line), timed; the spliced lines are compared
    with the small recognizer's own reads of the whole lines."""
    plans = []
    for line, crop in zip(lines, crops, strict=True):
        tiny, width = line.tiny, crop.shape[1]
        if tiny.doubt or len(tiny.text.strip()) <= 1:
            spans = [(0, len(tiny.text), 0, width)]
        else:
            spans = unsure_spans(tiny.text, line.detail, width, run.least, run.dropped)
        spans = [(a, b, max(0, x0), min(width, max(x1, x0 + 4))) for a, b, x0, x1 in spans]
        plans.append(spans)
    pieces = [
        crop[:, x0:x1] for crop, spans in zip(crops, plans, strict=True) for *_, x0, x1 in spans
    ]
    if pieces:
        small.read(pieces, workers, None)  # their widths met once, as the app primes them
        started = time.perf_counter()
        reads, _ = small.read(pieces, workers, None)
        run.seconds += time.perf_counter() - started
    run.pieces += len(pieces)
    run.width += sum(piece.shape[1] for piece in pieces)
    texts = iter(text for text, _, _ in (reads if pieces else []))
    for line, spans in zip(lines, plans, strict=True):
        spliced = splice(line.tiny.text, spans, [next(texts) for _ in spans])
        if spliced != line.small:
            run.otherwise += 1
            run.spaces_only += spliced.replace(" ", "") == line.small.replace(" ", "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=TUNING_SEED)
    parser.add_argument("--write", action="store_true")
    add_smoke_options(parser)
    args = parser.parse_args()
    check_smoke(args)
    tiny_path = find_tiny_recognizer()
    if tiny_path is None:
        sys.exit("No tiny recognizer: run `python -m devkit.ocr_tiny fetch` first.")
    files = find_model_files("fp32")
    ocr = PpOcr(files, threads=2)  # its detector; its small recognizer below
    core, config = ov.Core(), {"INFERENCE_PRECISION_HINT": "f32"}
    streams = {"PERFORMANCE_HINT": "THROUGHPUT", "NUM_STREAMS": "2"}
    small = Recognizer.compile(core, files.rec, config, streams)
    tiny = Recognizer.compile(core, tiny_path, config, streams)
    workers = ThreadPoolExecutor(2)
    makers = STYLES[:1] if args.smoke else STYLES
    lines: list[Line] = []
    seconds: dict[str, list[float]] = {}
    runs = [WordRun(least, dropped) for least, dropped in WORD_GATES]
    for page in gate_samples(args.seed, makers):
        bgr = np.ascontiguousarray(np.asarray(page.image.convert("RGB"))[:, :, ::-1])
        crops = crop_lines(bgr, ocr.detect(bgr, DetectorSettings()))
        small.read(crops, workers, None)  # every width met once by both, before timing
        tiny.read(crops, workers, None)
        small_reads, _, small_s = read_all(small, crops, workers)
        tiny_reads, details, tiny_s = read_all(tiny, crops, workers)
        seconds[page.style] = [small_s, tiny_s, sum(crop.shape[1] for crop in crops)]
        page_lines = [
            Line(page.style, a.text, b, d)
            for a, b, d in zip(small_reads, tiny_reads, details, strict=True)
        ]
        for run in runs:
            read_words_again(run, page_lines, crops, small, workers)
        lines += page_lines
        print(f"{page.style:24s} {len(crops):4d} lines {small_s:.2f} s {tiny_s:.2f} s", flush=True)
    publish(HEADING, report(lines, seconds, runs, args), args.write and not args.smoke)


def report(
    lines: list[Line],
    seconds: dict[str, list[float]],
    runs: list[WordRun],
    args: argparse.Namespace,
) -> str:
    small_s = sum(s for s, _, _ in seconds.values())
    tiny_s = sum(t for _, t, _ in seconds.values())
    columns = sum(c for _, _, c in seconds.values())
    weight = {id(line): len(line.small) + 1 for line in lines}
    total = sum(weight.values())
    differ = sum(line.tiny.text != line.small for line in lines)
    table = [
        "| gate: least char < | dropped > | lines sent on | text sent on | lines read "
        "otherwise than today | cascade time / today (computed) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for least, dropped in GATES:
        sent = [line for line in lines if sent_on(line, least, dropped)]
        share = sum(weight[id(line)] for line in sent) / total
        missed = sum(
            line.tiny.text != line.small for line in lines if not sent_on(line, least, dropped)
        )
        table.append(
            f"| {least} | {dropped} | {len(sent)} of {len(lines)} | {share:.0%} | {missed} | "
            f"{(tiny_s + share * small_s) / small_s:.2f} |"
        )
    command = "python bench/ocr_cascade.py" + (" --smoke" if args.smoke else "")
    return "\n".join(
        [
            HEADING,
            "",
            f"`{command}` (seed {args.seed}, {len(seconds)} pages, FP32 recognizers, 2 streams)",
            "",
            f"Measured side by side on the same {len(lines)} line crops: the small recognizer "
            f"{small_s:.2f} s, the tiny one {tiny_s:.2f} s ({tiny_s / small_s:.2f}x); the tiny "
            f"one reads {differ} lines otherwise than the small one.",
            "",
            *table,
            "",
            "Word by word: the small recognizer reads again only the words with a character "
            "under the bound or a blank step over it (a one-character read, a look-alike in "
            "doubt: the whole line), cut from the line by the tiny read's character columns; "
            "its reads of those pieces timed on the same streams.",
            "",
            "| word gate: least char < | dropped > | pieces read again | their columns | "
            "lines read otherwise than today (spaces only) | cascade time / today "
            "(computed) |",
            "|---:|---:|---:|---:|---:|---:|",
            *(
                f"| {run.least} | {run.dropped} | {run.pieces} | {run.width / columns:.0%} | "
                f"{run.otherwise} ({run.spaces_only}) | "
                f"{(tiny_s + run.seconds) / small_s:.2f} |"
                for run in runs
            ),
            "",
        ]
    )


if __name__ == "__main__":
    main()
