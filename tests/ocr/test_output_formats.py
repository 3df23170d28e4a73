"""Output formats as one type (issue 37): `--format` is parsed once into an `OutputFormat`, a
bad one is a usage error naming the choices, and every format comes out of the one `produce`
readable by a reference reader (csv, openpyxl, pypdfium2, markdown-it, json), whether it is
handed back or written to a target."""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Callable
from pathlib import Path

import pypdfium2 as pdfium
import pytest
from markdown_it import MarkdownIt
from ocr_pages import TABLE, ruled_table
from openpyxl import load_workbook

from desktop.cli import exit_codes, main
from desktop.core.ocr import OcrEngine
from desktop.core.ocr.formats import Origin, OutputFormat
from desktop.core.ocr.models import OcrDocument
from desktop.core.ocr.produce import HeldImage, produce, read_document

CHOICES = "choose one of text, md, json, csv, xlsx or pdf."


@pytest.fixture(scope="module")
def engine() -> OcrEngine:
    return OcrEngine(threads=2)


@pytest.fixture(scope="module")
def table_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("formats") / "stock.png"
    ruled_table(TABLE).save(path)
    return path


@pytest.fixture(scope="module")
def read(engine: OcrEngine, table_png: Path) -> OcrDocument:
    return read_document(engine, table_png)


def markdown_rows(data: bytes) -> list[list[str]]:
    rows: list[list[str]] = []
    for token in MarkdownIt("commonmark").enable("table").parse(data.decode("utf-8")):
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(token.content)
    return rows


def sheet_rows(data: bytes) -> list[list[object]]:
    sheet = load_workbook(io.BytesIO(data))["Table 1"]
    return [[cell.value for cell in row] for row in sheet.iter_rows()]


def pdf_words(data: bytes) -> list[str]:
    return pdfium.PdfDocument(data)[0].get_textpage().get_text_range().split()


# What a reference reader finds in each format's bytes, and what it should find there.
READERS: dict[OutputFormat, Callable[[bytes, OcrDocument], tuple[object, object]]] = {
    OutputFormat.TEXT: lambda data, doc: (data.decode().split(), doc.text().split()),
    OutputFormat.MD: lambda data, doc: (markdown_rows(data), TABLE),
    OutputFormat.JSON: lambda data, doc: (json.loads(data)["pages"][0]["tables"][0]["rows"], TABLE),
    OutputFormat.CSV: lambda data, doc: (list(csv.reader(io.StringIO(data.decode()))), TABLE),
    OutputFormat.XLSX: lambda data, doc: (
        sheet_rows(data),
        [TABLE[0], ["Keyboard", 12, 49.9], ["Monitor", 3, 219], ["Cable", 40, 4.5]],
    ),
    OutputFormat.PDF: lambda data, doc: (pdf_words(data), doc.text().split()),
}


def test_every_member_knows_its_suffix_media_type_and_origin() -> None:
    assert [str(fmt) for fmt in OutputFormat] == ["text", "md", "json", "csv", "xlsx", "pdf"]
    for fmt in OutputFormat:
        assert fmt.label.endswith(f"(*{fmt.suffix})")  # the file dialogs' filters
        assert OutputFormat.for_path(Path(f"a{fmt.suffix.upper()}")) is fmt
        assert OutputFormat.parse(fmt.value.upper()) is fmt
    assert [f for f in OutputFormat if f.binary] == [OutputFormat.XLSX, OutputFormat.PDF]
    assert [f for f in OutputFormat if f.origin is Origin.SOURCE] == [OutputFormat.PDF]
    assert OutputFormat.PDF.media_type == "application/pdf"
    assert OutputFormat.parse("markdown") is OutputFormat.MD  # the API's spelling
    with pytest.raises(ValueError, match=f"Unknown output format 'docx'; {CHOICES}"):
        OutputFormat.parse("docx")


def test_a_bad_format_is_a_usage_error_naming_the_choices(
    table_png: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["ocr", str(table_png), "--format", "docx"])
    assert exited.value.code == exit_codes.USAGE
    error = capsys.readouterr().err
    assert f"argument --format: Unknown output format 'docx'; {CHOICES}" in error


def test_the_format_is_parsed_once_per_command(
    table_png: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[object] = []
    parse = OutputFormat.parse

    def counted(name: object) -> OutputFormat:
        parsed.append(name)
        return parse(name)

    monkeypatch.setattr(OutputFormat, "parse", counted)
    out = tmp_path / "out"
    assert main(["ocr", str(table_png), "--format", "xlsx", "--out", str(out)]) == 0
    assert parsed == ["xlsx"]
    assert sheet_rows((out / "stock.xlsx").read_bytes())[1] == ["Keyboard", 12, 49.9]


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=str)
def test_each_format_comes_out_of_produce_readable(
    fmt: OutputFormat, engine: OcrEngine, table_png: Path, read: OcrDocument, tmp_path: Path
) -> None:
    handed = produce(fmt, engine, table_png)
    data = handed.content if isinstance(handed.content, bytes) else handed.text.encode()
    found, expected = READERS[fmt](data, read)
    assert found == expected

    target = tmp_path / f"stock{fmt.suffix}"
    written = produce(fmt, engine, table_png, target)
    assert written.written and written.content is None
    main_file = () if fmt.tables_only else (target,)  # csv: the tables alone
    sidecars = () if fmt.binary else (tmp_path / "stock.table1.csv",)  # a text format's tables
    assert written.outputs == main_file + sidecars
    assert sorted(tmp_path.iterdir()) == sorted(written.outputs)
    for path in written.outputs:
        reader = READERS[fmt] if path == target else READERS[OutputFormat.CSV]
        found, expected = reader(path.read_bytes(), read)
        assert found == expected


def test_an_image_in_memory_is_handed_over_unless_the_pdf_needs_it(
    engine: OcrEngine, table_png: Path, read: OcrDocument
) -> None:
    from desktop.core.images import load_image

    held = HeldImage(load_image(table_png))
    assert (
        produce(OutputFormat.CSV, engine, held).text
        == produce(OutputFormat.CSV, engine, table_png).text
    )
    with pytest.raises(ValueError, match="handed over"):
        held.peek()  # the engine had the only reference: its pixels are freed
    kept = HeldImage(load_image(table_png))
    page = produce(OutputFormat.PDF, engine, kept).data
    assert pdf_words(page) == read.text().split()
    assert kept.peek().size == load_image(table_png).size


def test_a_reading_cut_short_writes_nothing(engine: OcrEngine, table_png: Path, tmp_path: Path):
    stop = threading.Event()
    stop.set()
    produced = produce(OutputFormat.JSON, engine, table_png, tmp_path / "stock.json", cancel=stop)
    assert not produced.written and produced.outputs == ()
    assert list(tmp_path.iterdir()) == []
