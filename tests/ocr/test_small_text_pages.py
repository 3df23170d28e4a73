"""Small text on large pages (a 4K screen at 100%): the detector scales such pages down to its
cap, where 10-12 px lines were lost or misread; they are looked at again in tiles at their own
scale (desktop/core/ocr/detection_scale.py), and the tiles' boxes joined (strips.py)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from desktop.core.ocr import OcrEngine
from desktop.core.ocr.detection_scale import _holds_several_lines
from desktop.core.ocr.rendered_pages import font
from desktop.core.ocr.strips import Tile, join_tiled_boxes, plan_grid


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    ocr = OcrEngine()
    ocr.warm_up()
    return ocr


def _lines(count: int) -> list[str]:
    return [
        f"Entry {n}: the quick brown fox jumps over the lazy dog {n * 37}" for n in range(count)
    ]


def _page(width: int, height: int, faces: list[tuple[str, int]], lines: list[str]) -> Image.Image:
    """`lines` in columns side by side, one column per (font, px)."""
    page = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(page)
    for column, (key, size) in enumerate(faces):
        face = font(key, size, required=True)
        for row, line in enumerate(lines[column :: len(faces)]):
            left = 40 + column * width // len(faces)
            draw.text((left, 40 + row * 2 * size), line, font=face, fill="black")
    return page


@pytest.mark.parametrize(
    ("size", "faces"),
    [
        ((3840, 2160), [("sans", 10), ("serif", 12)]),
        ((3840, 2160), [("arial", 11), ("sans", 13)]),
        ((2560, 2560), [("serif", 12), ("arial", 12)]),
    ],
    ids=["4k-10-12px", "4k-11-13px", "square-12px"],
)
def test_every_small_line_of_a_large_page_is_read(
    engine: OcrEngine, size: tuple[int, int], faces: list[tuple[str, int]]
) -> None:
    # Read at the detector's cap, the 4K pages (0.53x) lost up to 8 of 8 lines of a column; at
    # 10 px the half-scale probe also found one box per column, holding all its lines. The
    # square page is seen at 2048 x 2048 px, where whole rows faded: 2 of its 12 lines were lost.
    lines = _lines(12)
    text = engine.extract(_page(*size, faces, lines)).text()
    assert [line for line in lines if line not in text] == []


def test_a_page_scaled_down_a_little_is_not_tiled(
    engine: OcrEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2560 x 1440 at 0.8x reads 9-13 px lines exactly in one look; tiles would double the time.
    calls: list[float] = []
    models = engine._ppocr()
    detect_once = models._detect_once
    monkeypatch.setattr(models, "_detect_once", lambda *a: calls.append(a[-1]) or detect_once(*a))
    lines = _lines(8)
    text = engine.extract(_page(2560, 1440, [("sans", 11), ("serif", 12)], lines)).text()
    assert [line for line in lines if line not in text] == []
    assert calls == [0.5, 1.0]  # the HiDPI probe (3.7 MP), then the page at the cap


def test_the_grid_covers_the_page_in_even_tiles_within_the_caps() -> None:
    tiles = plan_grid(2160, 3840, 1536, 16)
    assert len(tiles) == 6
    assert {(t.bottom - t.top, t.right - t.left) for t in tiles} == {(1208, 1451)}
    covered = np.zeros((2160, 3840), bool)
    for tile in tiles:
        covered[tile.top : tile.bottom, tile.left : tile.right] = True
    assert covered.all()
    # Past `max_tiles`, fewer and longer tiles (the detector scales them down to its cap).
    huge = plan_grid(12000, 12000, 1536, 16)
    assert len(huge) <= 16
    assert max(t.bottom for t in huge) == 12000 and max(t.right for t in huge) == 12000


def _box(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32)


def _joined_extents(found: list[tuple[Tile, list[np.ndarray]]]) -> list[tuple[float, ...]]:
    """The joined boxes as sorted (x0, y0, x1, y1) in image pixels."""
    return sorted(
        tuple(map(float, b.min(axis=0))) + tuple(map(float, b.max(axis=0)))
        for b in join_tiled_boxes(found)
    )


def test_a_line_cut_by_a_tile_edge_is_joined_and_lines_of_one_tile_are_not() -> None:
    left, right = Tile(0, 0, 1000, 1100), Tile(0, 900, 1000, 2000)
    below = Tile(800, 0, 2000, 1100)
    found = [
        # one line across the vertical edge at x 900-1100; two words in the left tile alone
        (left, [_box(700, 100, 1100, 120), _box(10, 300, 200, 320), _box(230, 300, 400, 320)]),
        (right, [_box(0, 100, 500, 120)]),  # tile coordinates: x 900-1400
        (below, [_box(10, 500, 200, 520)]),  # y 1300-1320: nothing of the other tiles there
    ]
    boxes = _joined_extents(found)
    assert boxes == [
        (10.0, 300.0, 200.0, 320.0),
        (10.0, 1300.0, 200.0, 1320.0),
        (230.0, 300.0, 400.0, 320.0),
        (700.0, 100.0, 1400.0, 120.0),
    ]


def test_cells_seen_in_two_tiles_are_neither_doubled_nor_joined() -> None:
    """A spreadsheet row in the overlap of two tiles (the wide sheet's "172,929.12 Paid", read
    twice before): one tile boxed the two cells as one, the other as two touching boxes; and
    two touching cells both tiles boxed apart stay apart."""
    upper, lower = Tile(0, 0, 1000, 1500), Tile(700, 0, 1700, 1500)
    found = [
        # in image coordinates y 759-780, the upper tile's view
        (upper, [_box(596, 759, 704, 780), _box(957, 759, 1010, 780), _box(1005, 759, 1105, 780)]),
        # the lower tile's view (tile coordinates: y 59-80)
        (lower, [_box(595, 58, 668, 80), _box(665, 58, 704, 80), _box(957, 59, 1010, 80),
                 _box(1005, 59, 1105, 80)]),
    ]  # fmt: skip
    boxes = _joined_extents(found)
    assert boxes == [
        (595.0, 758.0, 704.0, 780.0),
        (957.0, 759.0, 1010.0, 780.0),
        (1005.0, 759.0, 1105.0, 780.0),
    ]


def test_a_dense_sheet_in_the_overlap_of_two_tiles_is_kept_once_cell_by_cell() -> None:
    """2,000 cells seen by both tiles (a 3200 px spreadsheet's overlap), each once in the join;
    where one tile boxed a cell in two pieces the other tile's whole cell stands for both."""
    upper, lower = Tile(0, 0, 1600, 3200), Tile(400, 0, 2000, 3200)
    cells = [(60 * col + 4, 500 + 24 * row, 60 * col + 54, 500 + 24 * row + 16)
             for row in range(40) for col in range(50)]  # fmt: skip
    split = cells[777]
    pieces = [(split[0], split[1], split[0] + 20, split[3]), (split[0] + 24, *split[1:])]
    above = [_box(*cell) for cell in cells if cell != split] + [_box(*p) for p in pieces]
    below = [_box(x0, y0 - 400, x1, y1 - 400) for x0, y0, x1, y1 in cells]
    boxes = _joined_extents([(upper, above), (lower, below)])
    assert boxes == sorted(tuple(map(float, cell)) for cell in cells)


def test_a_box_of_several_lines_is_told_from_one_line() -> None:
    page = Image.new("RGB", (600, 200), "white")
    draw = ImageDraw.Draw(page)
    face = font("sans", 12, required=True)
    for row in range(4):
        draw.text((10, 10 + 24 * row), "Lines of a paragraph, merged", font=face, fill="black")
    draw.text((10, 150), "Hijg: one line with dots, ascenders", font=face, fill="black")
    bgr = np.asarray(page)[:, :, ::-1]
    assert _holds_several_lines(bgr, _box(5, 5, 300, 100))
    assert not _holds_several_lines(bgr, _box(5, 145, 300, 170))


def test_int8_reads_a_line_in_doubt_again_with_the_fp32_recognizer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On this page the INT8 recognizer read "Entry 0:" (10-px sans) as "Entry O:", "O" at 0.69
    # against 0.31, with no word to settle it; FP32 reads "0" at 0.96. The same integers on
    # every CPU: the same doubt, and the same read again.
    engine = OcrEngine(precision="int8")
    models = engine._ppocr()
    read_again = models._read_again
    again: list[int] = []
    monkeypatch.setattr(
        models,
        "_read_again",
        lambda crops, reads, lines: again.extend(lines) or read_again(crops, reads, lines),
    )
    lines = _lines(12)
    text = engine.extract(_page(3840, 2160, [("sans", 10), ("serif", 12)], lines)).text()
    assert [line for line in lines if line not in text] == []
    assert again, "no line was in doubt"
