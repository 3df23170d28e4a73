"""Hostile and unlucky inputs to `desklens ocr`, each in a child process under a memory limit
(tests/support/limited.py): extreme strips in both orientations, huge PDF pages, odd file
names, FIFOs. Each case asserts the exit code, a sentence instead of a traceback, and a peak
RSS within the budget."""

from __future__ import annotations

import os
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from limited import MAX_PEAK_RSS_MB, run_limited
from PIL import Image, ImageDraw

from desktop.cli import exit_codes
from desktop.core.ocr.rendered_pages import font


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One data folder for the module: the INT8 models are built and compiled once."""
    return {"DESKLENS_DATA_DIR": str(tmp_path_factory.mktemp("data"))}


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "Error:" not in stderr.replace("error:", ""), stderr


def _strip(path: Path, width: int, height: int, words: bool = False) -> Path:
    image = Image.new("RGB", (width, height), "white")
    if words:
        size = height - 10 if width > height else 20  # along the strip: one line; down it: many
        draw, face = ImageDraw.Draw(image), font("sans", size)
        step = 420 if width > height else 60
        for n in range(max(width, height) // step):
            xy = (n * step + 5, 2) if width > height else (5, n * step + 5)
            draw.text(xy, f"word{n} here", font=face, fill="black")
    image.save(path)
    return path


@pytest.mark.parametrize(
    ("width", "height"),
    [(65535, 10), (10, 65535), (30000, 3), (3, 30000), (65000, 200), (120, 60000)],
)
def test_an_extreme_strip_is_read_within_the_memory_budget(
    env: dict[str, str], tmp_path: Path, width: int, height: int
) -> None:
    strip = _strip(tmp_path / "strip.png", width, height)
    run = run_limited("ocr", "--no-service", str(strip), env=env)
    assert run.returncode == exit_codes.OK, run.stderr
    assert "no text found in strip.png" in run.stderr  # a blank strip says so, not just ""
    _no_traceback(run.stderr)
    assert run.peak_rss_mb < MAX_PEAK_RSS_MB


def test_the_largest_accepted_image_stays_within_the_memory_budget(
    env: dict[str, str], tmp_path: Path
) -> None:
    huge = _strip(tmp_path / "huge.png", 10_000, 10_000)  # 100 MP: images.MAX_PIXELS
    run = run_limited("ocr", "--no-service", str(huge), env=env)
    assert run.returncode == exit_codes.OK, run.stderr
    _no_traceback(run.stderr)
    assert run.peak_rss_mb < MAX_PEAK_RSS_MB


def test_a_strip_too_long_to_tile_is_refused_with_a_sentence(
    env: dict[str, str], tmp_path: Path
) -> None:
    strip = _strip(tmp_path / "thread.png", 1_000_000, 1)
    run = run_limited("ocr", "--no-service", str(strip), env=env)
    assert run.returncode == exit_codes.INPUT_PROBLEM
    assert '"thread.png" is a strip of 1000000 x 1 pixels, too long' in run.stderr
    _no_traceback(run.stderr)
    assert run.peak_rss_mb < MAX_PEAK_RSS_MB


def test_text_along_a_long_strip_is_read_across_its_tiles(
    env: dict[str, str], tmp_path: Path
) -> None:
    wide = _strip(tmp_path / "wide.png", 9000, 34, words=True)
    tall = _strip(tmp_path / "tall.png", 700, 9000, words=True)
    for path, count in ((wide, 9000 // 420), (tall, 9000 // 60)):
        run = run_limited("ocr", "--no-service", str(path), env=env)
        assert run.returncode == exit_codes.OK, run.stderr
        words = run.stdout.replace(" ", "")
        found = [n for n in range(count) if f"word{n}here" in words]
        assert len(found) >= 0.9 * count, run.stdout  # tiles joined: nothing lost ...
        assert all(words.count(f"word{n}here") == 1 for n in found)  # ... or read twice


def _pdf(path: Path, *sizes: tuple[float, float]) -> Path:
    document = pdfium.PdfDocument.new()
    for width, height in sizes:
        document.new_page(width, height)
    document.save(path)
    document.close()
    return path


@pytest.mark.parametrize(
    ("width", "height"), [(14400, 14400), (14400, 200), (200, 14400), (9000, 6000)]
)
def test_a_huge_pdf_page_is_rendered_at_a_scale_that_fits(
    env: dict[str, str], tmp_path: Path, width: int, height: int
) -> None:
    pdf = _pdf(tmp_path / "poster.pdf", (width, height), (595, 842))
    run = run_limited("ocr", "--no-service", str(pdf), env=env)
    assert run.returncode == exit_codes.OK, run.stderr
    _no_traceback(run.stderr)
    assert run.peak_rss_mb < MAX_PEAK_RSS_MB


def test_a_pdf_page_too_large_for_any_scale_is_refused_before_rendering(
    env: dict[str, str], tmp_path: Path
) -> None:
    pdf = _pdf(tmp_path / "sky.pdf", (595, 842), (200_000, 200_000))
    run = run_limited("ocr", "--no-service", str(pdf), env=env)
    assert run.returncode == exit_codes.INPUT_PROBLEM
    assert 'Page 2 of "sky.pdf" is too large to read' in run.stderr
    _no_traceback(run.stderr)
    assert run.peak_rss_mb < MAX_PEAK_RSS_MB


@pytest.mark.parametrize(
    "name",
    [
        "x" * 300 + ".png",  # longer than NAME_MAX
        "/".join(["d" * 200] * 25) + "/shot.png",  # longer than PATH_MAX
        "bad\udcff\udcfename.png",  # not UTF-8 (surrogate-escaped bytes)
        "new\nline.png",
    ],
)
def test_odd_file_names_are_one_sentence(env: dict[str, str], tmp_path: Path, name: str) -> None:
    run = run_limited("ocr", str(tmp_path / name), env=env)
    assert run.returncode == exit_codes.INPUT_PROBLEM, run.stderr
    assert "desklens: error:" in run.stderr
    assert "not found" in run.stderr or "too long" in run.stderr
    _no_traceback(run.stderr)


def test_a_fifo_is_refused_instead_of_blocking_or_not_found(
    env: dict[str, str], tmp_path: Path
) -> None:
    for name in ("pipe.pdf", "pipe.png"):
        os.mkfifo(tmp_path / name)
        run = run_limited("ocr", str(tmp_path / name), env=env, timeout=60)
        assert run.returncode == exit_codes.INPUT_PROBLEM
        assert f'"{tmp_path / name}" is a named pipe (FIFO), not an image or PDF.' in run.stderr
        _no_traceback(run.stderr)


def test_a_fifo_or_device_inside_a_folder_fails_that_file_only(
    env: dict[str, str], tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _strip(folder / "a.png", 400, 60, words=True)
    os.mkfifo(folder / "b.pdf")
    (folder / "c.png").symlink_to("/dev/zero")
    run = run_limited("ocr", str(folder), "--out", str(tmp_path / "out"), env=env, timeout=120)
    assert run.returncode == exit_codes.INPUT_PROBLEM
    assert '"b.pdf" is a named pipe (FIFO), not a PDF.' in run.stderr
    assert '"c.png" is a device, not an image.' in run.stderr
    assert "1 of 3 files read; 1 written to" in run.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.txt"]
