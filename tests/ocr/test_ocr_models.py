"""Model files and decoding: which OCR models load, and how recognizer scores become text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from desktop.core.ocr.ctc import ctc_decode, ctc_greedy_decode, look_alike_indices
from desktop.core.ocr.model_files import (
    INT8_DIR_ENV,
    MANIFEST_NAME,
    PRECISION_ENV,
    OcrModelError,
    build_int8_models,
    find_model_files,
    source_signature,
)

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
    probabilities[2, 3] = 0.3  # "c" less sure: the mean and the least character say so
    read = ctc_decode(probabilities, ALPHABET, logits=False)
    assert (read.text, read.score, read.least) == ("bc", pytest.approx(0.45), pytest.approx(0.3))
    assert ctc_greedy_decode(scores_for([0, 0, 0]), ALPHABET, logits=True) == ("", 0.0)


def test_ctc_confidence_over_the_full_alphabet_matches_a_float64_softmax() -> None:
    # The recognizer's real width: 18,710 classes, logits spread as the model spreads them.
    rng = np.random.default_rng(36)
    logits = (rng.normal(size=(40, 18_710)) * 3).astype(np.float32)
    path = rng.integers(1, 18_710, size=40)
    path[::4] = 0  # some blanks
    logits[np.arange(40), path] += 25.0
    alphabet = [""] + [chr(0x4E00 + index) for index in range(18_709)]
    text, confidence = ctc_greedy_decode(logits, alphabet, logits=True)
    steps = np.flatnonzero(path != 0)
    rows = logits[steps].astype(np.float64)
    chosen = np.exp(rows.max(axis=1)) / np.exp(rows).sum(axis=1)
    assert text == "".join(alphabet[index] for index in path[steps])
    assert confidence == pytest.approx(chosen.mean(), abs=1e-6)


LOOKS = ["", "0", "O", "c", "t", "2", "v", ".", " "]  # CTC blank first


def decode_look_alikes(chars: str, unsure: float) -> tuple[str, bool]:
    """Decodes `chars` (one step each) where every "0" or "O" has its look-alike at logit
    `unsure` below it (0 as good as sure of it: 9 below): the text, and whether it is in
    doubt."""
    logits = np.zeros((len(chars), len(LOOKS)), dtype=np.float32)
    for step, char in enumerate(chars):
        logits[step, LOOKS.index(char)] = 10.0
        if char in "0O":
            logits[step, LOOKS.index("O" if char == "0" else "0")] = 10.0 - unsure
    read = ctc_decode(logits, LOOKS, logits=True, look_alikes=look_alike_indices(LOOKS))
    return read.text, read.doubt


def read_with_look_alikes(chars: str, unsure: float) -> str:
    return decode_look_alikes(chars, unsure)[0]


def test_an_unsure_zero_or_o_takes_the_kind_of_the_rest_of_its_word() -> None:
    # A monospace "O" read "0" at 0.62 against 0.38 (e-mail pager): the rest of its word decides.
    assert read_with_look_alikes("0ct", unsure=0.5) == "Oct"
    assert read_with_look_alikes("2O2", unsure=0.5) == "202"
    assert read_with_look_alikes("c0 2", unsure=0.5) == "cO 2"  # words, not neighbours
    # Sure reads stay; so do words of both kinds ("v0.2") and a look-alike alone.
    assert read_with_look_alikes("0ct", unsure=9.0) == "0ct"
    assert read_with_look_alikes("v0.2", unsure=0.5) == "v0.2"
    assert read_with_look_alikes("0", unsure=0.5) == "0"


def test_a_look_alike_no_word_settles_is_in_doubt_when_the_model_was_torn() -> None:
    # p(other) = 1 / (1 + e^unsure): 0.38 at 0.5, 0.12 at 2, 0.0001 at 9
    assert decode_look_alikes("c 0.", unsure=0.5) == ("c 0.", True)  # "Entry 0:"
    assert decode_look_alikes("O", unsure=0.5) == ("O", True)
    assert decode_look_alikes("c 0.", unsure=2.0) == ("c 0.", False)  # sure enough
    assert decode_look_alikes("0ct", unsure=0.5) == ("Oct", False)  # its word settled it
    assert decode_look_alikes("v0.2", unsure=0.5) == ("v0.2", False)  # a word of both kinds


def test_fp32_models_come_from_the_rapidocr_wheel() -> None:
    files = find_model_files("fp32")
    assert files.precision == "fp32"
    assert all(
        path.is_file() and path.suffix == ".onnx" for path in (files.det, files.rec, files.cls)
    )


def test_int8_models_are_built_once_from_the_committed_ranges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(INT8_DIR_ENV, str(tmp_path / "int8"))
    files = find_model_files("int8")
    assert (files.precision, files.det.name, files.rec.name) == (
        "int8",
        "det_int8.xml",
        "rec_int8.xml",
    )
    assert files.det.parent == tmp_path / "int8" and files.cls.suffix == ".onnx"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left
    built = files.det.stat().st_mtime_ns
    assert find_model_files("int8").det.stat().st_mtime_ns == built  # reused, not rebuilt

    manifest = json.loads((tmp_path / "int8" / MANIFEST_NAME).read_text())
    manifest["source_sizes"]["rec"] += 1  # made from another rapidocr release: rebuilt
    (tmp_path / "int8" / MANIFEST_NAME).write_text(json.dumps(manifest))
    monkeypatch.setenv(PRECISION_ENV, "fp32")
    assert find_model_files("auto").precision == "fp32"  # asked for: nothing rebuilt
    assert json.loads((tmp_path / "int8" / MANIFEST_NAME).read_text())["source_sizes"] != (
        source_signature()
    )
    monkeypatch.delenv(PRECISION_ENV)
    default = find_model_files("auto")  # INT8 unless FP32 is asked for
    assert (default.precision, default.rec_reference) == ("int8", find_model_files("fp32").rec)
    assert json.loads((tmp_path / "int8" / MANIFEST_NAME).read_text())["source_sizes"] == (
        source_signature()
    )


def test_a_copy_another_process_finished_first_is_kept(tmp_path: Path) -> None:
    """Two processes building at first start (a window and the CLI): the one that finishes
    second keeps the first one's files, which that one may be loading, and drops its own."""
    target = tmp_path / "int8"
    first = build_int8_models(target)
    assert first is not None
    inode = first["det"].stat().st_ino
    second = build_int8_models(target)  # finishes with the first copy already in place
    assert second == first and first["det"].stat().st_ino == inode
    assert [p.name for p in tmp_path.iterdir()] == ["int8"]  # its staging is gone


def test_ranges_for_other_models_or_an_unwritable_folder_mean_fp32(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.core.ocr import int8

    stale = tmp_path / "ranges.json"
    ranges = json.loads(int8.RANGES_FILE.read_text())
    ranges["source_sizes"] = {"det": 1, "rec": 2}
    stale.write_text(json.dumps(ranges))
    monkeypatch.setattr(int8, "RANGES_FILE", stale)
    monkeypatch.setenv(INT8_DIR_ENV, str(tmp_path / "int8"))
    assert find_model_files("auto").precision == "fp32"  # the default falls back
    with pytest.raises(OcrModelError, match="could not be built"):
        find_model_files("int8")

    monkeypatch.undo()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(INT8_DIR_ENV, str(blocker / "int8"))
    assert find_model_files("auto").precision == "fp32"


def test_every_layer_with_quantized_weights_runs_in_int8(tmp_path: Path) -> None:
    """Every convolution and matrix product whose weights NNCF quantized runs in INT8 on the
    CPU, but for the depthwise ones (their weights' FakeQuantize sits behind a Reshape, which
    the plugin runs in f32); the layers kept FP32 on purpose have no weight decision."""
    import openvino as ov

    from desktop.core.ocr.int8 import build_int8, load_ranges

    source = find_model_files("fp32").rec
    target = tmp_path / "rec.xml"
    decisions = load_ranges()["rec"]
    assert build_int8(source, decisions, target) == len(decisions) > 40
    kinds = {
        n.get_friendly_name(): n.get_type_name()
        for n in ov.Core().read_model(source).get_ordered_ops()
    }
    weighted = {
        name
        for decision in decisions
        for name, port in decision["consumers"]
        if port == 1 and kinds.get(name) in ("Convolution", "MatMul")
    }
    assert len(weighted) > 30
    compiled = ov.Core().compile_model(target, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    precision = {}
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        if info["layerType"].astype(str) in ("Convolution", "FullyConnected"):
            for name in info["originalLayersNames"].astype(str).split(","):
                precision[name] = info["runtimePrecision"].astype(str).lower()
    # A layer the plugin fused under another name (Conv.55) is not listed by its own.
    listed = weighted & precision.keys()
    assert len(listed) >= len(weighted) - 2
    assert {name: precision[name] for name in listed if precision[name] not in ("i8", "u8")} == {}
