"""A hub that answers oddly (a bare 302 with no Location, an empty 200, an HTML page) is named
as having answered, with what to check, never as 'no answer' or a disk problem."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from devkit.hub_server import hub_env
from devkit.hub_server import run_download as _run

ANSWERS = {
    "bare 302": (302, b""),
    "empty 200": (200, b""),
    "a proxy's page": (200, b"<html><body>Please log in to the proxy</body></html>"),
}


@pytest.fixture
def odd_hub(request: pytest.FixtureRequest) -> Iterator[str]:
    status, body = ANSWERS[request.param]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(timeout=30)
    server.server_close()


@pytest.mark.parametrize("odd_hub", list(ANSWERS), indirect=True)
def test_an_odd_answer_from_the_hub_is_named_as_such(odd_hub: str, tmp_path: Path) -> None:
    result = _run(tmp_path / "models", hub_env(odd_hub, tmp_path))
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert f"{odd_hub} answered, but not as a model hub does" in result.stderr, result.stderr
    assert "HF_ENDPOINT" in result.stderr
    assert "no answer" not in result.stderr and "Cannot store" not in result.stderr


def test_a_file_sent_with_a_header_line_of_a_megabyte_is_named_as_not_http(hub, tmp_path: Path):
    """The listing is fine; one file's answer carries a 1 MB header line: the hub was
    reached and answered badly, so not "could not reach" (issue 59)."""
    hub.odd["openvino_language_model.bin"] = "huge header"
    result = _run(tmp_path / "models", hub_env(hub.url, tmp_path))
    assert result.returncode == 4 and "Traceback" not in result.stderr, result.stderr
    assert f"{hub.url} answered with what is not valid HTTP" in result.stderr, result.stderr
    assert "Could not reach" not in result.stderr


def test_a_file_answered_with_a_bare_redirect_is_no_no_answer(hub, tmp_path: Path):
    """A 302 with no Location for a listed file: said as other bytes than listed, with
    nothing installed; never "no answer" or a disk problem."""
    hub.odd["openvino_language_model.bin"] = "bare 302"
    result = _run(tmp_path / "models", hub_env(hub.url, tmp_path))
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert "other bytes than it lists" in result.stderr, result.stderr
    assert "no answer" not in result.stderr and "Cannot store" not in result.stderr
