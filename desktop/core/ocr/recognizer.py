"""A compiled PP-OCR recognizer: its streams, its alphabet, and how its scores become line
reads. A gate picks the reads another recognizer reads again (with INT8 models, the FP32 one
reads what INT8 is unsure of: issue 56)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import openvino as ov

from desktop.core.errors import describe
from desktop.core.ocr.ctc import CtcRead, ctc_decode, look_alike_indices
from desktop.core.ocr.model_files import OcrModelError
from desktop.core.ocr.model_inputs import (
    REC_BATCH,
    REC_BATCH_SIZES,
    REC_BATCH_WIDTH,
    REC_HEIGHT,
    REC_WIDTH_STEP,
    rec_width,
    recognizer_inputs,
)

# A line's text, confidence, and the crop column of each character (None when not kept).
Read = tuple[str, float, np.ndarray | None]
Gate = Callable[[CtcRead], bool]  # True: the next recognizer reads the line again


@dataclass
class Recognizer:
    """A recognizer's streams (one infer request each) and how its scores become text."""

    requests: list[ov.InferRequest]
    alphabet: list[str]
    logits: bool  # its output is logits (a final softmax dropped)
    look_alikes: dict[int, int]

    @classmethod
    def compile(
        cls, core: ov.Core, path: Path, config: dict[str, str], streams: dict[str, str]
    ) -> Recognizer:
        """Compiled with `streams` (`{}`: one request)."""
        model = read_model(core, path)
        alphabet = ["", *_character_list(model), " "]  # CTC blank first, space last
        logits = _drop_final_softmax(model)
        compiled = core.compile_model(model, "CPU", {**config, **streams})
        jobs = compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS") if streams else 1
        requests = [compiled.create_infer_request() for _ in range(jobs)]
        return cls(requests, alphabet, logits, look_alike_indices(alphabet))

    def same_kind(self, other: Recognizer) -> bool:
        return self.logits == other.logits

    def read(
        self, crops: Sequence[np.ndarray], workers: ThreadPoolExecutor, gate: Gate | None
    ) -> tuple[list[Read], list[int]]:
        """The reads of `crops`, and the indices of those `gate` sends on (sorted)."""
        results: list[Read] = [("", 0.0, None)] * len(crops)
        pending = recognizer_inputs(crops)
        take = threading.Lock()
        onward: list[int] = []

        def work(request: ov.InferRequest) -> None:
            # Each worker takes the next line as soon as its stream is free. Plain threads
            # rather than AsyncInferQueue callbacks: with those, 1 exit in 5 aborted.
            while True:
                with take:
                    batch = next(pending, None)
                if batch is None:
                    return
                indices, tensor = batch
                request.infer([tensor])  # releases the GIL
                for index, scores in zip(indices, request.get_output_tensor().data, strict=True):
                    read = ctc_decode(
                        scores, self.alphabet, logits=self.logits, look_alikes=self.look_alikes
                    )
                    if gate is not None and gate(read):
                        onward.append(index)
                    columns = None
                    if len(read.text.strip()) >= 2:  # where its characters lie (wide gaps)
                        steps = (read.steps + 0.5) * tensor.shape[-1] / len(scores)
                        columns = steps * crops[index].shape[1] / rec_width(crops[index])
                    results[index] = read.text, read.score, columns

        list(workers.map(work, self.requests))
        return results, sorted(onward)

    def prime(self, max_width: int, workers: ThreadPoolExecutor) -> None:
        """Meet every padded line width up to `max_width` once on every stream (each new
        width costs ~30 ms on each stream the first time)."""
        widths = range(REC_WIDTH_STEP, max_width + 1, REC_WIDTH_STEP)

        def work(request: ov.InferRequest) -> None:
            for width in widths:
                sizes = REC_BATCH_SIZES if width <= REC_BATCH_WIDTH else (REC_BATCH,)
                for size in sizes:
                    request.infer([np.zeros((size, 3, REC_HEIGHT, width), np.float32)])

        list(workers.map(work, self.requests))


def read_model(core: ov.Core, path: Path) -> ov.Model:
    try:
        return core.read_model(path)
    except Exception as exc:  # OpenVINO raises RuntimeError with a C++ trace
        raise OcrModelError(
            f"The OCR model {path.name} could not be loaded: {describe(exc)}"
        ) from exc


def _drop_final_softmax(model: ov.Model) -> bool:
    """Make the model output logits when it ends in a softmax; True if it then does."""
    result = model.get_results()[0]
    last = result.input_value(0).get_node()
    if last.get_type_name() != "Softmax":
        return False
    model.add_outputs([last.input_value(0)])
    model.remove_result(result)
    return True


def _character_list(rec_model: ov.Model) -> list[str]:
    """The recognizer's alphabet, stored in the model's metadata (so no dictionary download)."""
    try:
        return rec_model.get_rt_info()["framework"]["character"].value.splitlines()
    except Exception as exc:
        raise OcrModelError(
            "The OCR recognition model carries no character list; reinstall DeskLens."
        ) from exc
