"""Model files and decoding: which OCR models load, and how recognizer scores become text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from desktop.core.ocr.model_files import (
    INT8_DIR_ENV,
    MANIFEST_NAME,
    OcrModelError,
    find_model_files,
    write_manifest,
)
from desktop.core.ocr.ppocr import ctc_greedy_decode

ALPHABET = ["", "a", "b", "c", " "]  # CTC blank first


def scores_for(path: list[int], confident: float = 4.0) -> np.ndarray:
    """Logits with `confident` on the chosen class of each time step, 0 elsewhere."""
    logits = np.zeros((len(path), len(ALPHABET)), dtype=np.float32)
    logits[np.arange(len(path)), path] = confident
    return logits


def test_ctc_decoding_merges_repeats_and_drops_blanks() -> None:
    # a a _ a b b _ _ c ␣ c: adjacent repeats merge, a blank separates a real double letter
    path = [1, 1, 0, 1, 2, 2, 0, 0, 3, 4, 3]
    text, confidence = ctc_greedy_decode(scores_for(path), ALPHABET, logits=True)
    assert text == "aabc c"
    expected = np.exp(4.0) / (np.exp(4.0) + len(ALPHABET) - 1)  # softmax of the chosen class
    assert confidence == pytest.approx(expected, rel=1e-5)


def test_ctc_decoding_of_probabilities_and_of_nothing() -> None:
    probabilities = np.full((3, len(ALPHABET)), 0.1, dtype=np.float32)
    probabilities[[0, 1, 2], [2, 0, 3]] = 0.6
    assert ctc_greedy_decode(probabilities, ALPHABET, logits=False) == ("bc", pytest.approx(0.6))
    assert ctc_greedy_decode(scores_for([0, 0, 0]), ALPHABET, logits=True) == ("", 0.0)


def test_fp32_models_come_from_the_rapidocr_wheel() -> None:
    files = find_model_files("fp32")
    assert files.precision == "fp32"
    assert all(
        path.is_file() and path.suffix == ".onnx" for path in (files.det, files.rec, files.cls)
    )


def test_int8_models_are_used_only_with_a_matching_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(INT8_DIR_ENV, str(tmp_path))
    assert find_model_files("auto").precision == "fp32"
    with pytest.raises(OcrModelError, match="No INT8 OCR models"):
        find_model_files("int8")

    for name in ("det_int8", "rec_int8"):
        (tmp_path / f"{name}.xml").write_text("<net/>")
        (tmp_path / f"{name}.bin").write_bytes(b"")
    write_manifest(tmp_path, {"det": "det_int8.xml", "rec": "rec_int8.xml"}, {})
    files = find_model_files("auto")
    assert (files.precision, files.det.name, files.rec.name) == (
        "int8",
        "det_int8.xml",
        "rec_int8.xml",
    )
    assert files.cls.suffix == ".onnx"

    manifest = json.loads((tmp_path / MANIFEST_NAME).read_text())
    manifest["source_sizes"]["rec"] += 1  # made from another rapidocr release
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert find_model_files("auto").precision == "fp32"
