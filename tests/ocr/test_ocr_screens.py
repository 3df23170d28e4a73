"""Issue 20's everyday screens through the real models: each rendered style (the benchmark's
own renderers, bench/ocr_styles_*.py) comes out in its exact reading order, without its
decorations, and its tables with the rendered cells.

A line may differ from the truth by a confusable character or two (the recognizer's, not the
layout's: "rn" read as "m", a Czech "ď" as "d'"), so lines are compared with a small CER; the
order and the number of lines must be exact.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from markdown_it import MarkdownIt

from bench.ocr_samples import Sample
from bench.ocr_scoring import decorations_read
from bench.ocr_styles_documents import make_invoice, make_ruled_table, make_two_columns
from bench.ocr_styles_screens import SCREEN_STYLES
from bench.ocr_styles_tables import CHART_AND_TABLE_STYLES, make_invoice_details, make_report_table
from desktop.core.ocr import OcrEngine, OcrResult
from desktop.core.ocr.accuracy import cer, normalise, table_cells_score

SEED = 20
MAX_LINE_CER = 0.05  # a line of 40 characters may have two wrong, a short line one


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    ocr = OcrEngine()
    ocr.warm_up()
    return ocr


def rendered(maker: Callable[[random.Random, str], Sample]) -> Sample:
    return maker(random.Random(f"{SEED}:{maker.__name__}"), maker.__name__)


def assert_reading_order(result: OcrResult, sample: Sample) -> None:
    got = [normalise(line) for line in result.text().splitlines() if normalise(line)]
    expected = [normalise(line) for line in sample.reference.splitlines() if normalise(line)]
    assert len(got) == len(expected), "\n".join(got)
    for line, truth in zip(got, expected, strict=True):
        # One wrong character is allowed on any line: the FP32 recognizer itself reads the
        # seed-20 accented page's "miłość?" as "mitość?" (1/7), which INT8 must not be held to.
        allowed = max(MAX_LINE_CER, 1 / len(truth))
        assert cer(line, truth) <= allowed, f"{line!r} should read {truth!r}"


@pytest.mark.parametrize(
    "maker", SCREEN_STYLES + CHART_AND_TABLE_STYLES, ids=lambda maker: maker.__name__[5:]
)
def test_style_reads_in_its_exact_order_without_decorations(engine: OcrEngine, maker) -> None:
    sample = rendered(maker)
    result = engine.extract(sample.image)
    assert_reading_order(result, sample)
    assert decorations_read(result, sample) == 0


@pytest.mark.parametrize("maker", [make_two_columns, SCREEN_STYLES[0]], ids=["columns", "chat"])
def test_a_two_column_page_and_a_chat_thread_both_read_right(engine: OcrEngine, maker) -> None:
    sample = rendered(maker)
    assert_reading_order(engine.extract(sample.image), sample)


@pytest.mark.parametrize(
    "maker",
    [make_invoice_details, make_invoice, make_ruled_table, make_report_table],
    ids=["invoice with details", "invoice", "ruled table", "report table"],
)
def test_table_cells_equal_the_rendered_cells(engine: OcrEngine, maker) -> None:
    sample = rendered(maker)
    result = engine.extract(sample.image)
    [truth] = sample.tables
    scores = [table_cells_score(table.rows, truth.texts()) for table in result.tables]
    best = max(range(len(scores)), key=lambda index: scores[index].f1)
    assert [list(row) for row in result.tables[best].rows] == truth.texts()
    # Each cell's box lies on the text drawn for it.
    found = result.tables[best]
    for row, boxes in zip(truth.rows, found.cell_boxes, strict=True):
        for cell, box in zip(row, boxes, strict=True):
            if cell.text:
                assert box is not None and _overlaps(box, cell.box), (cell, box)
    # The Markdown a user copies parses back into the same cells.
    assert _markdown_cells(found.markdown()) == truth.texts()


def _overlaps(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def _markdown_cells(markdown: str) -> list[list[str]]:
    rows: list[list[str]] = []
    for token in MarkdownIt("commonmark").enable("table").parse(markdown):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(token.content.replace("\\|", "|"))
    return rows
