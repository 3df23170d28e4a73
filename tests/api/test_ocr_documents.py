"""`POST /v1/ocr?format=csv|xlsx|pdf`: the tables as CSV in the JSON answer, a workbook or a
searchable PDF as the file itself (issue 28), each the same as `desklens ocr --format` gives
(issue 37). The real server and the real fast OCR; no chat model is loaded (the OCR endpoint
does not use it)."""

from __future__ import annotations

import csv
import http.client
import io
import json
import zipfile
from types import SimpleNamespace

import pypdfium2 as pdfium
import pytest
from api_support import ocr_engine_once, png, start_api
from ocr_pages import TABLE, ruled_table
from openpyxl import load_workbook
from pypdf import PdfReader

from desktop.cli import main
from desktop.core.images import load_image
from desktop.core.ocr.formats import OutputFormat


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory):
    chat_model = SimpleNamespace(info=SimpleNamespace(name="not-loaded"))
    running = start_api(chat_model, tmp_path_factory.mktemp("api-data"), run_jobs=False)
    yield running
    running.stop()


def post(api, query: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", api.server.port, timeout=120)
    headers = {"Authorization": f"Bearer {api.token}", "Content-Type": "image/png"}
    try:
        connection.request("POST", f"/v1/ocr{query}", body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def test_csv_comes_in_the_json_answer_and_files_as_their_bytes(api) -> None:
    page = png(ruled_table(TABLE))
    status, _, body = post(api, "?format=csv", page)
    assert status == 200
    answer = json.loads(body)
    assert answer["format"] == "csv" and answer["tables"] == 1
    assert list(csv.reader(io.StringIO(answer["text"].strip("\n")))) == TABLE

    status, headers, body = post(api, "?format=xlsx", page)
    assert status == 200
    assert headers["content-type"].startswith("application/vnd.openxmlformats")
    assert 'filename="ocr.xlsx"' in headers["content-disposition"]
    assert headers["x-desklens-tables"] == "1"
    sheet = load_workbook(io.BytesIO(body))["Table 1"]
    assert [cell.value for cell in sheet[2]] == ["Keyboard", 12, 49.9]

    status, headers, body = post(api, "?format=pdf", page)
    assert status == 200 and headers["content-type"] == "application/pdf"
    PdfReader(io.BytesIO(body), strict=True)
    expected = ocr_engine_once().extract(load_image(ruled_table(TABLE))).text()
    layer = pdfium.PdfDocument(body)[0].get_textpage().get_text_range()
    assert layer.split() == expected.split()


def test_an_unknown_format_is_refused_with_the_list(api) -> None:
    status, _, body = post(api, "?format=docx", png(ruled_table(TABLE)))
    assert status == 400
    error = json.loads(body)["error"]
    assert error["param"] == "format" and "xlsx or pdf" in error["message"]


def without_run_details(value: object) -> object:
    """A JSON document less what differs between two readings of one image: the name it came
    under ("uploaded image" for the API) and the seconds taken."""
    if isinstance(value, dict):
        kept = {k: v for k, v in value.items() if k not in ("source", "seconds")}
        return {k: without_run_details(v) for k, v in kept.items()}
    if isinstance(value, list):
        return [without_run_details(v) for v in value]
    return value


def workbook_parts(data: bytes) -> dict[str, bytes]:
    """The workbook's files less docProps/core.xml (its created/modified times)."""
    with zipfile.ZipFile(io.BytesIO(data)) as book:
        return {name: book.read(name) for name in book.namelist() if name != "docProps/core.xml"}


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=str)
def test_the_api_and_the_cli_give_the_same_output(
    api, fmt: OutputFormat, tmp_path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "stock.png"
    path.write_bytes(png(ruled_table(TABLE)))
    status, _, body = post(api, f"?format={fmt}", path.read_bytes())
    assert status == 200
    from_api = body if fmt.binary else json.loads(body)["text"].encode()
    assert main(["ocr", str(path), "--format", str(fmt), "--no-service"]) == 0
    from_cli = capsysbinary.readouterr().out
    if not fmt.binary:
        from_cli = from_cli.removesuffix(b"\n")  # printed with its line's end
    if fmt is OutputFormat.JSON:
        assert without_run_details(json.loads(from_api)) == without_run_details(
            json.loads(from_cli)
        )
    elif fmt is OutputFormat.XLSX:
        assert workbook_parts(from_api) == workbook_parts(from_cli)
    else:
        assert from_api == from_cli and from_api.strip()
