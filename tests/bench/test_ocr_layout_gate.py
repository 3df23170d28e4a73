"""The layout's no-regression gate (issue 36): every style of the OCR benchmark, one page each
from the tuning seed, read with the FP32 models (the same text on every CPU), is no worse than
its CER in bench/ocr_baseline.json by more than NOISE. A rule that wins one kind of page and
costs another fails here, naming the style. After a change that makes a style better, record
it with `python bench/ocr_baseline.py --write` (which also prints the held-out seeds' figures).
"""

from __future__ import annotations

import pytest

from bench.ocr_baseline import (
    NOISE,
    STYLES,
    TUNING_SEED,
    Maker,
    gate_samples,
    load,
    regressions,
    style_cers,
)
from desktop.core.ocr import OcrEngine


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    ocr = OcrEngine(precision="fp32")
    ocr.warm_up()
    return ocr


def test_every_style_and_both_seed_sets_have_a_baseline() -> None:
    baseline = load()
    styles = {sample.style for sample in gate_samples(TUNING_SEED)}
    assert set(baseline) == {"tuning", "held_out"}
    assert set(baseline["tuning"]) == styles == set(baseline["held_out"])


def test_a_style_worse_by_more_than_noise_is_named() -> None:
    before = {"plain": 0.001, "code": 0.010}
    assert regressions({"plain": 0.001 + NOISE, "code": 0.0}, before) == []
    assert regressions({"plain": 0.002 + NOISE, "code": 0.0}, before) == [
        f"plain: CER {0.002 + NOISE:.4f}, baseline 0.0010"
    ]
    assert regressions({"new": 0.0}, before) == [
        "new: no baseline (run bench/ocr_baseline.py --write)"
    ]


@pytest.mark.slow
@pytest.mark.parametrize("maker", STYLES, ids=lambda maker: maker.__name__[5:])
def test_no_style_reads_worse_than_its_baseline(engine: OcrEngine, maker: Maker) -> None:
    now = style_cers(engine, gate_samples(TUNING_SEED, [maker]))
    assert regressions(now, load()["tuning"]) == []
