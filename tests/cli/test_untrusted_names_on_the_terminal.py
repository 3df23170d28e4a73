"""A path or a server address with control characters is said escaped, in a sentence with
README's exit code, never raw and never as a traceback (issue 59)."""

from __future__ import annotations

import os

import pytest
from cli_runner import desklens

RAW = "\x1b]0;pwned\x07\x1b[2J"


def clean(text: str) -> bool:
    return "\x1b" not in text and "\x07" not in text and "Traceback" not in text


@pytest.mark.parametrize("kind", ["missing", "not a model"])
def test_models_import_says_a_raw_path_escaped(tmp_path, kind) -> None:
    source = tmp_path / f"model{RAW}"
    if kind == "not a model":
        source.mkdir()
        (source / "notes.txt").write_text("no model here")
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path / "data")}
    run = desklens("models", "--import", str(source), "--models-dir", str(tmp_path / "models"),
                   "--progress", "lines", env=env)  # fmt: skip
    assert run.returncode in (3, 4) and clean(run.stdout + run.stderr), run
    assert r"model\x1b]0;pwned\x07" in run.stdout + run.stderr


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9/v\x01", f"http://127.0.0.1:9/{RAW}", "http://a b/v1"]
)
def test_a_server_address_with_control_characters_is_a_sentence(tmp_path, url) -> None:
    env = {**os.environ, "DESKLENS_DATA_DIR": str(tmp_path), "DESKLENS_SERVER": ""}
    # `ask` checks its options first (2, usage); `models --server` says what the server did (1)
    for code, args in ((1, ("models", "--server", url)), (2, ("ask", "-q", "Hi", "--server", url))):
        run = desklens(*args, env=env, timeout=60)
        assert run.returncode == code and clean(run.stderr), run
        assert "is not a server address" in run.stderr
