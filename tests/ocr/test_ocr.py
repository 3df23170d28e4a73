"""Fast OCR end to end: rendered images with known text through the real PP-OCR models.

The engine is created once per session (compiling the models takes seconds); while it warms
up, network connections are refused, which proves the models never trigger a download.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from ocr_pages import TABLE, ruled_table, text_layer_pdf
from PIL import Image, ImageDraw, ImageFont

from desktop.cli import exit_codes, main, ocr_cmd, ocr_local
from desktop.core.images import load_image
from desktop.core.ocr import OcrEngine, OcrResult, grounding_text
from desktop.core.ocr.accuracy import cer
from desktop.core.ocr.batch import BatchProgress, run_batch
from desktop.core.ocr.export import write_combined
from desktop.core.ocr.formats import OutputFormat
from desktop.core.ocr.pdf import PdfError, read_pdf
from desktop.core.ocr.rendered_pages import font as page_font
from desktop.core.ocr.rendered_pages import render_lines as render

ROOT = Path(__file__).resolve().parents[2]
PARAGRAPH = [
    "Quarterly revenue grew by 12 percent",
    "compared with the same period last year.",
    "The new storage service launched on 3 March",
    "and now serves 4500 customers in Europe.",
]
# Rendered at 18 px in a TrueType font, PP-OCR reads such text exactly in our runs (CER 0 on
# the benchmark's plain screenshots). 3% leaves room for one or two confusable characters
# (l/I, O/0) per test while still failing on a broken pipeline, which scores above 50%.
MAX_CER = 0.03


def font(size: int, *, mono: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu when installed (fonts-dejavu), else the TrueType font that Pillow ships."""
    return page_font("mono" if mono else "sans", size)


@pytest.fixture(scope="session")
def engine() -> OcrEngine:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the OCR engine tried to open a network connection")

    ocr = OcrEngine()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "create_connection", refuse)
        ocr.warm_up()
    return ocr


@pytest.fixture(scope="session")
def paragraph_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("images") / "paragraph.png"
    render(PARAGRAPH).save(path)
    return path


# --- reading text ---------------------------------------------------------------------------


def test_reads_rendered_text(engine: OcrEngine) -> None:
    result = engine.extract(render(PARAGRAPH), name="para")
    assert cer(result.text(), "\n".join(PARAGRAPH)) < MAX_CER
    assert result.source_name == "para"
    assert [line.paragraph for line in result.lines] == [0, 0, 0, 0]
    assert all(0.5 <= line.confidence <= 1.0 for line in result.lines)


def test_light_text_on_dark_background(engine: OcrEngine) -> None:
    image = render(PARAGRAPH[:2])
    dark = Image.eval(image, lambda value: 255 - value)  # light text on near-black
    assert cer(engine.extract(dark).text(), "\n".join(PARAGRAPH[:2])) < MAX_CER


def test_angle_classifier_turns_upside_down_lines_around() -> None:
    upside_down = render(PARAGRAPH).rotate(180)
    result = OcrEngine(use_angle_classifier=True).extract(upside_down)
    # Each line reads right; their order follows the picture as given (bottom line first).
    assert (
        cer("\n".join(line.text for line in reversed(result.lines)), "\n".join(PARAGRAPH)) < MAX_CER
    )


def test_blank_image_has_no_text(engine: OcrEngine) -> None:
    result = engine.extract(Image.new("RGB", (400, 300), "white"))
    assert result.lines == []
    assert result.text() == "" and result.markdown() == ""


def test_paragraphs_are_separated_by_blank_lines(engine: OcrEngine) -> None:
    lines = ["First paragraph opens here", "and ends on this line.", "", "Second paragraph."]
    text = engine.extract(render(lines)).text()
    assert text.split("\n\n") == [
        "First paragraph opens here\nand ends on this line.",
        "Second paragraph.",
    ]


def test_two_column_page_reads_left_column_first(engine: OcrEngine) -> None:
    left = [
        "The left column starts the story",
        "and keeps going down the page",
        "until its last line is reached.",
        "Only then does reading move on.",
    ]
    right = [
        "The right column continues it",
        "with more words on each line",
        "and finishes the whole article",
        "at the bottom of this column.",
    ]
    face, step = font(16), 28
    page = Image.new("RGB", (900, 80 + step * len(left)), "white")
    draw = ImageDraw.Draw(page)
    draw.text((30, 15), "A Heading Across Both Columns", font=font(24), fill="black")
    for number, (a, b) in enumerate(zip(left, right, strict=True)):
        draw.text((30, 60 + number * step), a, font=face, fill="black")
        draw.text((480, 60 + number * step), b, font=face, fill="black")
    result = engine.extract(page)
    expected = "\n".join(["A Heading Across Both Columns", *left, *right])
    assert cer(result.text(), expected) < MAX_CER
    columns = {line.text: line.column for line in result.lines}
    assert [columns.get(text) for text in (left[0], right[0])] == [0, 1]


def test_ruled_table_becomes_markdown_table(engine: OcrEngine) -> None:
    result = engine.extract(ruled_table(TABLE))
    assert len(result.tables) == 1
    table = result.tables[0]
    assert table.ruled
    assert [list(row) for row in table.rows] == TABLE
    markdown = result.markdown()
    assert "| Product | Units | Price |\n|---|---|---|\n| Keyboard | 12 | 49.90 |" in markdown
    assert table.csv().splitlines()[2] == "Monitor,3,219.00"
    # In plain text a table row is its cells separated by tabs (pastes into a spreadsheet).
    assert "Monitor\t3\t219.00" in result.text()
    [as_json] = json.loads(result.to_json())["tables"]  # plain numbers, not numpy's
    assert as_json["ruled"] and as_json["rows"][1] == TABLE[1]
    assert as_json["box"] == list(table.box) and all(type(v) is int for v in as_json["box"])


def test_aligned_columns_without_rules_become_a_table(engine: OcrEngine) -> None:
    face = font(17)
    image = Image.new("RGB", (700, 220), "white")
    draw = ImageDraw.Draw(image)
    for number, row in enumerate(TABLE):
        for x, cell in zip((30, 330, 500), row, strict=True):
            draw.text((x, 20 + number * 44), cell, font=face, fill="black")
    result = engine.extract(image)
    assert len(result.tables) == 1 and not result.tables[0].ruled
    assert [list(row) for row in result.tables[0].rows] == TABLE


def test_code_keeps_its_indentation(engine: OcrEngine) -> None:
    code = [
        "def total(items):",
        "    result = 0",
        "    for item in items:",
        "        result += item.price",
        "    return result",
    ]
    result = engine.extract(render(code, size=16, mono=True))
    indents = [line.indent for line in result.lines]
    assert [line.kind for line in result.lines] == ["code"] * 5
    assert indents[0] == 0 and indents[1] == indents[2] == indents[4] >= 2
    assert indents[3] > indents[2]
    assert result.markdown().startswith("```\ndef total(items):\n")
    assert result.markdown().endswith("```")


def test_json_lines_have_boxes_inside_the_image(engine: OcrEngine) -> None:
    image = render(PARAGRAPH)
    data = json.loads(engine.extract(image, name="para.png").to_json())
    assert (data["width"], data["height"], data["source"]) == (*image.size, "para.png")
    assert [line["text"] for line in data["lines"]] == [
        line.text for line in engine.extract(image).lines
    ]
    for number, line in enumerate(data["lines"]):
        left, top, right, bottom = line["box"]
        assert 0 <= left < right <= image.width and 0 <= top < bottom <= image.height
        drawn_top = 20 + number * round(18 * 1.6)  # where render() put the line
        assert top - 8 <= drawn_top <= bottom


def test_grounding_text_lists_lines_with_relative_boxes(engine: OcrEngine) -> None:
    result = engine.extract(render(PARAGRAPH))
    grounding = grounding_text(result).splitlines()
    assert grounding[0].startswith("Text read from the image by OCR")
    assert len(grounding) == 1 + len(result.lines)
    box, text = grounding[1].split(") ", 1)
    assert text == result.lines[0].text
    assert all(0 <= int(value) <= 1000 for value in box.strip("(").split(","))
    empty = OcrResult(lines=[], width=10, height=10, seconds=0.0)
    assert grounding_text(empty) == "OCR found no text in the image."


def test_concurrent_calls_are_serialised(engine: OcrEngine) -> None:
    images = [render(PARAGRAPH[:2]), render(PARAGRAPH[2:])]
    texts: dict[int, str] = {}
    threads = [
        threading.Thread(target=lambda i=i: texts.__setitem__(i, engine.extract(images[i]).text()))
        for i in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cer(texts[0], "\n".join(PARAGRAPH[:2])) < MAX_CER
    assert cer(texts[1], "\n".join(PARAGRAPH[2:])) < MAX_CER


# --- PDF --------------------------------------------------------------------------------------


def test_pdf_with_text_layer_is_read_without_ocr(engine: OcrEngine, tmp_path: Path) -> None:
    path = tmp_path / "letter.pdf"
    path.write_bytes(text_layer_pdf(PARAGRAPH))
    document = read_pdf(engine, path)
    assert len(document.pages) == 1
    page = document.pages[0]
    assert page.text_layer and page.page == 1
    assert page.text() == "\n".join(PARAGRAPH)
    assert (page.width, page.height) == (1224, 1584)  # 612 x 792 pt at 2x
    assert all(0 <= line.box[0] < line.box[2] <= page.width for line in page.lines)


def test_pdf_without_text_layer_is_rendered_and_ocred(engine: OcrEngine, tmp_path: Path) -> None:
    path = tmp_path / "scan.pdf"
    second = render(["A second scanned page."])
    render(PARAGRAPH).save(path, "PDF", resolution=100, save_all=True, append_images=[second])
    pages: list[tuple[int, int]] = []
    document = read_pdf(engine, path, on_page=lambda done, total: pages.append((done, total)))
    assert pages == [(1, 2), (2, 2)]
    assert [page.text_layer for page in document.pages] == [False, False]
    assert cer(document.pages[0].text(), "\n".join(PARAGRAPH)) < MAX_CER
    assert cer(document.pages[1].text(), "A second scanned page.") < MAX_CER
    assert document.text().count("\f") == 1  # pages separated by a form feed


def test_damaged_pdf_is_a_clear_error(engine: OcrEngine, tmp_path: Path) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(b"%PDF-1.4\nthis is not really a pdf")
    with pytest.raises(PdfError, match='"broken.pdf" could not be opened as a PDF'):
        read_pdf(engine, path)


# --- batch ------------------------------------------------------------------------------------


def test_folder_batch_writes_one_output_per_input_and_survives_a_corrupt_file(
    engine: OcrEngine, tmp_path: Path
) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    render(PARAGRAPH[:2]).save(folder / "a.png")
    render(PARAGRAPH[2:]).convert("L").save(folder / "b.jpg")
    ruled_table(TABLE).save(folder / "c.png")
    (folder / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not an image at all")
    (folder / "notes.txt").write_text("not an image")
    events: list[BatchProgress] = []
    out = tmp_path / "out"

    report = run_batch(
        engine, [folder], out_dir=out, fmt=OutputFormat.MD, on_progress=events.append
    )

    assert [o.path.name for o in report.outcomes] == ["a.png", "b.jpg", "broken.png", "c.png"]
    assert [o.ok for o in report.outcomes] == [True, True, False, True]
    assert report.failed[0].error.startswith('"broken.png" is not an image')
    assert [p.name for p in report.refused] == ["notes.txt"]
    assert sorted(p.name for p in out.iterdir()) == ["a.md", "b.md", "c.md", "c.table1.csv"]
    assert cer((out / "b.md").read_text(), "\n".join(PARAGRAPH[2:])) < MAX_CER
    finals = [(e.done, e.total, e.status) for e in events if e.status != "reading"]
    assert finals == [(1, 4, "done"), (2, 4, "done"), (3, 4, "failed"), (4, 4, "done")]


def test_batch_stops_when_cancelled(engine: OcrEngine, tmp_path: Path) -> None:
    for name in ("one.png", "two.png", "three.png"):
        render(PARAGRAPH[:1]).save(tmp_path / name)
    cancel = threading.Event()

    def stop_after_first(progress: BatchProgress) -> None:
        if progress.status == "done":
            cancel.set()

    report = run_batch(engine, [tmp_path], on_progress=stop_after_first, cancel=cancel)
    assert report.cancelled
    assert [o.path.name for o in report.outcomes] == ["one.png"]


def test_combined_json_holds_every_document(engine: OcrEngine, tmp_path: Path) -> None:
    render(PARAGRAPH[:1]).save(tmp_path / "x.png")
    render(PARAGRAPH[1:2]).save(tmp_path / "y.png")
    report = run_batch(engine, [tmp_path / "x.png", tmp_path / "y.png"])
    combined = write_combined(
        [o.document for o in report.outcomes if o.document], tmp_path / "all.json"
    )
    data = json.loads(combined.read_text())
    assert [document["source"] for document in data] == ["x.png", "y.png"]
    assert data[1]["pages"][0]["lines"][0]["text"] == PARAGRAPH[1]


# --- command line -----------------------------------------------------------------------------


@pytest.fixture
def cli_threads(engine: OcrEngine, monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """Makes the CLI read in-process with the session's engine (an OCR service running on
    the developer's machine must not answer); records the --threads it asked for."""
    asked: list[int | None] = []

    def shared_engine(threads: int | None = None) -> OcrEngine:
        asked.append(threads)
        return engine

    monkeypatch.setattr(ocr_local, "OcrEngine", shared_engine)
    monkeypatch.setattr(ocr_cmd, "ask_service", lambda request: None)
    return asked


def test_cli_prints_the_text_of_one_image(
    cli_threads: list[int | None], paragraph_png: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ocr", str(paragraph_png)]) == exit_codes.OK
    captured = capsys.readouterr()
    assert cer(captured.out, "\n".join(PARAGRAPH)) < MAX_CER
    assert captured.err == ""


def test_cli_json_format(
    cli_threads: list[int | None], paragraph_png: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ocr", "--format", "json", "--threads", "2", str(paragraph_png)]) == exit_codes.OK
    assert cli_threads == [2]
    data = json.loads(capsys.readouterr().out)
    assert data["source"] == "paragraph.png" and len(data["pages"][0]["lines"]) == 4


def test_cli_folder_writes_outputs_and_reports_failures(
    cli_threads: list[int | None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    render(PARAGRAPH[:1]).save(folder / "good.png")
    (folder / "bad.png").write_bytes(b"garbage")
    code = main(
        ["ocr", str(folder), "--out", str(tmp_path / "out"), "--combined", str(tmp_path / "all.md")]
    )
    err = capsys.readouterr().err
    assert code == exit_codes.INPUT_PROBLEM
    assert "[2/2] ok: good.png" in err and '[1/2] failed: "bad.png"' in err
    assert "1 of 2 files read" in err and "Traceback" not in err
    assert (tmp_path / "out" / "good.txt").read_text().strip() == PARAGRAPH[0]
    assert (tmp_path / "all.md").read_text().startswith("# good.png\n\n")


def test_cli_input_and_usage_errors(
    cli_threads: list[int | None], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ocr", str(tmp_path / "missing.png")]) == exit_codes.INPUT_PROBLEM
    assert "not found" in capsys.readouterr().err
    (tmp_path / "a.png").write_bytes(b"")
    assert main(["ocr", str(tmp_path / "a.png")]) == exit_codes.INPUT_PROBLEM
    assert "is empty" in capsys.readouterr().err
    render(["x"]).save(tmp_path / "b.png")
    assert main(["ocr", str(tmp_path / "a.png"), str(tmp_path / "b.png")]) == exit_codes.USAGE
    assert "give --out DIR" in capsys.readouterr().err
    assert main(["ocr", "--threads", "0", str(tmp_path / "b.png")]) == exit_codes.USAGE
    assert "--threads must be 1 or more" in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("hello")
    assert main(["ocr", str(tmp_path / "notes.txt")]) == exit_codes.INPUT_PROBLEM
    assert "not an image or PDF DeskLens can read: notes.txt" in capsys.readouterr().err


def test_python_m_desktop_ocr_prints_text(paragraph_png: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "desktop", "ocr", str(paragraph_png)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert cer(completed.stdout, "\n".join(PARAGRAPH)) < MAX_CER


def test_loaded_image_keeps_its_name(engine: OcrEngine, paragraph_png: Path) -> None:
    assert engine.extract(load_image(paragraph_png)).source_name == "paragraph.png"
