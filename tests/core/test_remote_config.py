"""Which server, with which key: addresses checked before anything is sent (plain http only on
this computer or a private network unless the user insists), the key kept 0600 and never shown,
the command line's --server / $DESKLENS_SERVER / $DESKLENS_SERVER_KEY resolved."""

from __future__ import annotations

import json
import os
import stat

import pytest

from desktop.core.remote.config import (
    ServerConfig,
    from_environment,
    is_local_address,
    load_saved,
    normalized_url,
    save,
)
from desktop.core.remote.errors import RemoteError, retry_after

KEY = "sk-secret-0123456789"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("10.0.0.5:8000", "http://10.0.0.5:8000/v1"),
        ("http://127.0.0.1:8765/v1/", "http://127.0.0.1:8765/v1"),
        ("http://gpu-box:8000/v3", "http://gpu-box:8000/v3"),  # a LAN machine by its name
        ("https://models.example.com/v3", "https://models.example.com/v3"),
        ("http://[::1]:9000", "http://[::1]:9000/v1"),
        ("http://192.168.1.20:8000/v3", "http://192.168.1.20:8000/v3"),
    ],
)
def test_addresses_are_normalized_to_the_apis_base(given, expected):
    assert normalized_url(given) == expected


@pytest.mark.parametrize(
    ("given", "sentence"),
    [
        ("http://8.8.8.8:8000/v3", "not on this computer or a private network"),
        ("ftp://10.0.0.5", "is not a server address"),
        ("http://user:pw@10.0.0.5", "not in the server address"),
        ("http://10.0.0.5:99999", "port that is not a number from 1 to 65535"),
        ("http://10.0.0.5/v3?key=1", "no ?query"),
    ],
)
def test_an_address_that_cannot_be_used_is_one_sentence(given, sentence):
    with pytest.raises(RemoteError, match=sentence.replace("?", r"\?")):
        normalized_url(given)


def test_plain_http_to_a_public_address_needs_the_users_word():
    assert normalized_url("http://8.8.8.8:8000/v3", insecure=True) == "http://8.8.8.8:8000/v3"


@pytest.mark.parametrize(
    ("host", "local"),
    [("127.0.0.1", True), ("localhost", True), ("10.1.2.3", True), ("172.16.0.9", True),
     ("fd00::7", True), ("169.254.1.1", True), ("gpu-box", True), ("box.local", True),
     ("8.8.8.8", False), ("2001:4860:4860::8888", False)],
)  # fmt: skip
def test_local_addresses(host, local):
    assert is_local_address(host) is local


def test_the_key_is_kept_0600_apart_from_the_address_and_never_shown(tmp_path):
    config = ServerConfig("http://10.0.0.5:8000/v3", KEY, "qwen3-vl")
    save(tmp_path, config)
    key_file = tmp_path / "server.key"
    if os.name == "posix":
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert KEY not in (tmp_path / "server.json").read_text()
    assert json.loads((tmp_path / "server.json").read_text())["url"] == config.url
    assert load_saved(tmp_path) == config
    assert KEY not in repr(config) and KEY not in str(config)


def test_a_key_file_with_loose_rights_is_tightened(tmp_path):
    save(tmp_path, ServerConfig("http://10.0.0.5:8000/v3", KEY))
    (tmp_path / "server.key").chmod(0o644)
    assert load_saved(tmp_path).api_key == KEY
    if os.name == "posix":
        assert stat.S_IMODE((tmp_path / "server.key").stat().st_mode) == 0o600


def test_no_server_asked_for_is_none(tmp_path):
    assert from_environment(None, tmp_path, environ={}) is None


def test_the_command_line_takes_the_key_from_the_environment_or_settings(tmp_path):
    save(tmp_path, ServerConfig("http://10.0.0.5:8000/v3", KEY, "saved-model"))
    env = {"DESKLENS_SERVER": "http://10.0.0.5:8000/v3"}
    config = from_environment(None, tmp_path, environ=env)
    assert (config.url, config.api_key, config.model) == (
        env["DESKLENS_SERVER"],
        KEY,
        "saved-model",
    )
    env["DESKLENS_SERVER_KEY"] = "sk-from-env"
    assert from_environment(None, tmp_path, environ=env).api_key == "sk-from-env"
    other = from_environment("http://10.0.0.9:8000/v3", tmp_path, "m2", environ={})
    assert (other.model, other.api_key) == ("m2", "")  # the saved key goes to its server only


def test_retry_after_reads_seconds_and_dates():
    assert retry_after("7") == 7
    assert retry_after(None) is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0  # in the past: now
    assert retry_after("soon") is None


def test_the_command_lines_allow_http_is_the_users_word_for_a_public_address(tmp_path):
    url = "http://8.8.4.4:8000/v3"
    with pytest.raises(RemoteError, match="--allow-http"):
        from_environment(url, tmp_path, environ={})
    assert from_environment(url, tmp_path, environ={}, insecure=True).url == url


@pytest.mark.parametrize("given", ["http://[::1", "http://[abc]:80", "[::1"])
def test_a_broken_bracketed_address_is_a_sentence(given):
    with pytest.raises(RemoteError, match="is not a server address"):
        normalized_url(given)


def test_reading_without_repair_leaves_a_loose_key_file_as_it_is(tmp_path):
    save(tmp_path, ServerConfig("http://10.0.0.5:8000/v3", KEY))
    (tmp_path / "server.key").chmod(0o644)
    assert load_saved(tmp_path, repair=False).api_key == KEY
    if os.name == "posix":
        assert stat.S_IMODE((tmp_path / "server.key").stat().st_mode) == 0o644
