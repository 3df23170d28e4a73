"""The API's security requirements, each against the real server: token, Host, Origin, body
size and time limits, the queue limit under 50 concurrent clients, loopback-only sockets."""

from __future__ import annotations

import ipaddress
import os
import stat
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest
from api_support import hold_after_a_full_answer, http_call, raw_request, start_api, user_message

from desktop.core.api.tokens import load_or_create_token, replace_token


def test_a_missing_or_wrong_token_is_a_401(api) -> None:
    import openai as client_package

    wrong = client_package.OpenAI(base_url=api.url, api_key="dl-wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        wrong.models.list()
    assert caught.value.body["code"] == "invalid_api_key"
    status, headers, body = http_call(api, "GET", "/models", headers={"Authorization": ""})
    assert status == 401 and headers["www-authenticate"] == "Bearer"
    assert body["error"]["type"] == "authentication_error"
    status, _, _ = http_call(api, "GET", "/models", headers={"Authorization": api.token})
    assert status == 401  # the token without "Bearer"


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io", ""])
def test_a_foreign_host_header_is_refused(api, host) -> None:
    request = (
        f"GET /v1/models HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {api.token}\r\n"
        "Connection: close\r\n\r\n"
    )
    reply = raw_request(api.server.port, request.encode())
    assert reply.startswith(b"HTTP/1.1 403")
    assert b'"code":"bad_host"' in reply


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]"])
def test_loopback_host_names_with_any_port_are_accepted(api, host) -> None:
    status, _, _ = http_call(api, "GET", "/models", headers={"Host": f"{host}:{api.server.port}"})
    assert status == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://localhost:3000"},  # a local dev page is a web page too
        {"Sec-Fetch-Site": "cross-site"},
    ],
)
def test_browser_cross_origin_requests_are_refused(api, headers) -> None:
    status, reply_headers, body = http_call(api, "GET", "/models", headers=headers)
    assert status == 403 and body["error"]["code"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in reply_headers
    status, _, _ = http_call(api, "OPTIONS", "/chat/completions", headers=headers)
    assert status == 403  # no preflight either


def test_an_origin_the_user_added_gets_cors(engine, tmp_path) -> None:
    origin = "http://localhost:3000"
    api = start_api(engine, tmp_path, run_jobs=False, allowed_origins=(origin,))
    try:
        status, headers, _ = http_call(api, "OPTIONS", "/models", headers={"Origin": origin})
        assert status == 204 and headers["access-control-allow-origin"] == origin
        status, headers, _ = http_call(api, "GET", "/models", headers={"Origin": origin})
        assert status == 200 and headers["access-control-allow-origin"] == origin
        status, _, _ = http_call(
            api, "GET", "/models", headers={"Origin": origin, "Authorization": ""}
        )
        assert status == 401  # an allowed page still needs the token
    finally:
        api.stop()


def test_a_20_mb_body_is_a_413_and_the_server_goes_on(api) -> None:
    body = b"{" + b" " * (20 << 20) + b"}"
    status, _, reply = http_call(
        api, "POST", "/chat/completions", body, {"Content-Type": "application/json"}
    )
    assert status == 413 and reply["error"]["code"] == "body_too_large"
    assert http_call(api, "GET", "/models")[0] == 200


def test_a_body_that_never_arrives_times_out_with_408(engine, tmp_path) -> None:
    api = start_api(engine, tmp_path, run_jobs=False, body_timeout_s=0.5)
    try:
        request = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {api.token}\r\nContent-Length: 100\r\n\r\n{{"
        )
        reply = raw_request(api.server.port, request.encode(), half_close=False)
        assert reply.startswith(b"HTTP/1.1 408")
    finally:
        api.stop()


def test_50_concurrent_requests_are_answered_or_refused_with_429(api, sample_image) -> None:
    client = api.client(timeout=300)
    messages = [user_message("Count.", sample_image)]

    def one(index: int) -> str:
        try:
            answer = client.chat.completions.create(
                model="desklens", messages=messages, max_tokens=4
            )
        except openai.RateLimitError as exc:
            assert exc.body["code"] == "queue_full"
            return "429"
        assert answer.choices[0].finish_reason in ("stop", "length")
        return "200"

    with ThreadPoolExecutor(50) as pool:
        outcomes = list(pool.map(one, range(50)))
    assert len(outcomes) == 50  # none lost: every request got an answer or a 429
    assert outcomes.count("200") >= 9  # the running one and the 8 that may wait
    assert "429" in outcomes
    assert api.server.running and http_call(api, "GET", "/models")[0] == 200


def test_the_server_binds_loopback_only(api) -> None:
    addresses = api.server.addresses
    assert addresses and all(ipaddress.ip_address(host).is_loopback for host, _ in addresses)
    assert {port for _, port in addresses} == {api.server.port}


def test_the_token_file_is_private_kept_and_renewed_when_unusable(tmp_path) -> None:
    path = tmp_path / "api.token"
    token = load_or_create_token(path)
    assert len(token) >= 40 and load_or_create_token(path) == token
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        path.chmod(0o644)
        assert load_or_create_token(path) == token
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.write_text("short")
    renewed = load_or_create_token(path)
    assert renewed != token and len(renewed) >= 40
    assert replace_token(path) != renewed


def test_stopping_refuses_waiting_requests_and_closes_the_port(engine, tmp_path, sample_image):
    api = start_api(engine, tmp_path, run_jobs=False)  # nothing takes the jobs: they wait
    client = api.client(timeout=60)
    with ThreadPoolExecutor(2) as pool:
        waiting = [
            pool.submit(
                client.chat.completions.create,
                model="desklens",
                messages=[user_message("hi")],
            )
            for _ in range(2)
        ]
        _wait_until_queued(api, 2)
        port = api.server.port
        api.stop()
        for future in waiting:
            with pytest.raises(openai.InternalServerError) as caught:
                future.result()
            assert caught.value.status_code == 503
    with pytest.raises(ConnectionRefusedError):
        raw_request(port, b"GET / HTTP/1.1\r\n\r\n")


def _wait_until_queued(api, count: int) -> None:
    """Blocks until `count` jobs wait (the queue's own condition, no polling sleep)."""
    queue = api.server.backend.jobs
    with queue._ready:
        queue._ready.wait_for(lambda: len(queue._jobs) >= count, timeout=60)
    assert queue.waiting >= count


def test_a_request_past_its_time_limit_is_a_504_and_frees_its_place(engine, tmp_path):
    api = start_api(engine, tmp_path, run_jobs=False, request_timeout_s=0.5, max_waiting=1)
    try:
        body = {"model": "desklens", "messages": [user_message("hi")]}
        status, _, reply = http_call(api, "POST", "/chat/completions", body)
        assert status == 504 and reply["error"]["type"] == "timeout_error"
        status, _, reply = http_call(api, "POST", "/chat/completions", body)
        assert status == 504  # not 429: the first one's place was given back
    finally:
        api.stop()


def test_a_client_leaving_mid_stream_stops_its_answer(engine, tmp_path, sample_image):
    api = start_api(engine, tmp_path)
    try:
        held, messages, full_tokens = hold_after_a_full_answer(api, sample_image)
        stream = api.client().chat.completions.create(
            model="desklens", messages=messages, max_tokens=2000, stream=True
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                break  # the first words came: leave
        stream.close()
        assert held.stopped_by_the_leave(full_tokens)
        assert http_call(api, "GET", "/models")[0] == 200
    finally:
        api.stop()
