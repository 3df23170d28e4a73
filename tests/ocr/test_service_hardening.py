"""The OCR service under hostile and clumsy clients: silent peers, a flood of connections,
poisoned requests, a dying listener thread, and socket folders that are not ours."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Client
from pathlib import Path

import pytest
from other_user import NOBODY, as_other_user, shared_folder

from desktop.cli import serve_cmd
from desktop.core.ocr import service, service_transport
from desktop.core.ocr.service import (
    MAX_CONNECTIONS,
    OcrReply,
    OcrRequest,
    OcrService,
    ServiceError,
    ask_service,
    default_endpoint,
    ping,
)
from desktop.core.ocr.service_transport import HANDSHAKE_TIMEOUT, Endpoint, connect


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "data"
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(folder))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return folder


def echo(request: OcrRequest, stopping: threading.Event) -> OcrReply:
    return OcrReply("ok", output=request.path)


@contextmanager
def serving(handler=echo, **options) -> Iterator[OcrService]:  # noqa: ANN001
    answering = OcrService(handler, **options)
    answering.start()
    try:
        yield answering
    finally:
        answering.stop()


def _silent_peer(endpoint: Endpoint) -> socket.socket:
    """Connects and never says a word (not even the challenge's answer)."""
    peer = socket.socket(socket.AF_UNIX)
    peer.connect(endpoint.address)
    return peer


def _closed_by_service(peer: socket.socket, within: float) -> bool:
    """True when the service ends the connection (after its challenge) within `within` s."""
    peer.settimeout(within)
    try:
        while peer.recv(4096):
            pass  # the challenge it sent
    except TimeoutError:
        return False
    return True


def test_a_silent_client_stalls_no_one_and_is_dropped_after_the_handshake_timeout() -> None:
    with serving() as answering:
        peers = [_silent_peer(answering.endpoint) for _ in range(3)]
        reply = ask_service(OcrRequest("/meanwhile.png"))  # answered while they stay silent
        assert reply is not None and reply.output == "/meanwhile.png"
        assert all(_closed_by_service(peer, HANDSHAKE_TIMEOUT + 5) for peer in peers)
        for peer in peers:
            peer.close()


def test_an_authenticated_client_that_never_sends_its_request_is_dropped() -> None:
    with serving():
        quiet = connect(default_endpoint())
        assert quiet is not None
        assert ping() == os.getpid()  # others are answered meanwhile
        with socket.socket(fileno=os.dup(quiet.fileno())) as view:
            assert _closed_by_service(view, HANDSHAKE_TIMEOUT + 5)
        quiet.close()


def test_requests_are_answered_side_by_side() -> None:
    both_inside = threading.Barrier(2, timeout=20)

    def meeting(request: OcrRequest, stopping: threading.Event) -> OcrReply:
        both_inside.wait()  # only passes when two requests are being handled at once
        return echo(request, stopping)

    with serving(meeting):
        replies: list[OcrReply | None] = []
        clients = [
            threading.Thread(target=lambda n=n: replies.append(ask_service(OcrRequest(f"/{n}"))))
            for n in range(2)
        ]
        for client in clients:
            client.start()
        for client in clients:
            client.join(30)
    assert sorted(reply.output for reply in replies if reply) == ["/0", "/1"]


def test_beyond_the_connection_limit_a_client_reads_by_itself_at_once() -> None:
    release = threading.Event()
    inside = threading.Semaphore(0)

    def held(request: OcrRequest, stopping: threading.Event) -> OcrReply:
        inside.release()
        release.wait(30)
        return echo(request, stopping)

    with serving(held):
        waiting = [
            threading.Thread(target=ask_service, args=(OcrRequest(f"/{n}"),))
            for n in range(MAX_CONNECTIONS)
        ]
        for client in waiting:
            client.start()
        for _ in waiting:
            assert inside.acquire(timeout=30)  # every slot is busy reading
        assert ask_service(OcrRequest("/one-too-many")) is None  # refused, not queued
        release.set()
        for client in waiting:
            client.join(30)
        assert ask_service(OcrRequest("/after")) is not None  # the slots came back


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        (b"[" * 200_000, "The request is nested 200000 levels deep"),
        (b"\xff\xfe not json", "The request is not valid JSON"),
        (b"[1, 2, 3]", "not a DeskLens OCR request"),
        (json.dumps({"op": "ocr"}).encode(), "not a DeskLens OCR request"),
        (json.dumps({"op": "ocr", "path": 7, "format": "text"}).encode(), "not a DeskLens"),
        (json.dumps({"op": "open", "paths": "not a list"}).encode(), None),
    ],
)
def test_a_poisoned_request_gets_an_error_and_the_service_goes_on(
    payload: bytes, error: str | None
) -> None:
    with serving() as answering:
        poisoned = connect(answering.endpoint)
        assert poisoned is not None
        with poisoned:
            poisoned.send_bytes(payload)
            reply = json.loads(poisoned.recv_bytes())
        if error is None:
            assert reply == {"opened": False}
        else:
            assert reply["status"] == "failed" and error in reply["error"]
        assert answering.running and ask_service(OcrRequest("/next.png")) is not None


def test_an_oversized_message_ends_that_connection_only() -> None:
    with serving() as answering:
        flood = connect(answering.endpoint)
        assert flood is not None
        with flood, pytest.raises((EOFError, OSError)):
            flood.send_bytes(b" " * (service.MAX_MESSAGE_BYTES + 1))
            flood.recv_bytes()
        assert ask_service(OcrRequest("/next.png")) is not None


@pytest.mark.parametrize("failure", [RecursionError, MemoryError, KeyError, SystemError])
def test_any_handler_failure_is_that_request_s_error(failure: type[Exception]) -> None:
    def failing(request: OcrRequest, stopping: threading.Event) -> OcrReply:
        raise failure("inside the handler")

    with serving(failing) as answering:
        reply = ask_service(OcrRequest("/a.png"))
        assert reply is not None and reply.status == "failed"
        assert "inside the handler" in reply.error
        assert answering.running


def test_a_dead_listener_thread_is_reported_and_serve_exits_non_zero(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answering = OcrService(echo)
    answering.start()
    assert answering._listener is not None

    def broken_accept() -> None:
        raise RuntimeError("the listener broke")

    monkeypatch.setattr(answering._listener, "accept", broken_accept)
    service_transport.wake(answering.endpoint)  # the next accept() raises
    answering._thread.join(10)
    assert not answering.running
    assert answering.failure == "The OCR service stopped unexpectedly: the listener broke"
    code = serve_cmd._stopped(answering, serve_cmd._wait(answering, threading.Event(), None))
    answering.stop()
    assert code == 1
    assert "the listener broke (`desklens serve` ended)" in capsys.readouterr().err


def test_a_deep_data_folder_prefers_xdg_runtime_dir_then_an_abstract_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, open_tmp: Path
) -> None:
    monkeypatch.setenv("DESKLENS_DATA_DIR", str(tmp_path / ("d" * 120)))
    runtime = open_tmp / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    endpoint = default_endpoint()
    assert Path(endpoint.address).parent.parent == runtime
    with serving():
        assert ask_service(OcrRequest("/x.png")) is not None
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / ("r" * 120)))
    endpoint = default_endpoint()
    assert (
        endpoint.is_abstract
        and endpoint.address == f"\0desklens-{os.getuid()}-" + (endpoint.address.rsplit("-", 1)[1])
    )
    with serving():  # no file to pre-create, so nothing to symlink
        assert ask_service(OcrRequest("/y.png")) is not None


def _planted_endpoint(tmp_path: Path, socket_folder: Path) -> Endpoint:
    key_folder = tmp_path / "keys"
    return Endpoint(str(socket_folder / "ocr.sock"), "AF_UNIX", key_folder / "ocr.key")


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    with shared_folder() as folder:
        yield folder


def test_a_symlinked_socket_folder_planted_by_another_user_is_refused(
    open_tmp: Path, tmp_path: Path
) -> None:
    target = tmp_path / "victim"
    target.mkdir(mode=0o755)
    planted = open_tmp / "desklens-0-planted"

    def plant() -> None:
        planted.symlink_to(target)

    as_other_user(plant)
    answering = OcrService(echo, endpoint=_planted_endpoint(tmp_path, planted))
    with pytest.raises(ServiceError, match="is a symbolic link; DeskLens does not follow it"):
        answering.start()
    assert target.stat().st_mode & 0o777 == 0o755  # never chmod-ed through the link
    assert not (target / "ocr.sock").exists()


def test_a_socket_folder_owned_by_another_user_is_refused(open_tmp: Path, tmp_path: Path) -> None:
    planted = open_tmp / "desklens-0-theirs"
    as_other_user(lambda: planted.mkdir(mode=0o777))
    answering = OcrService(echo, endpoint=_planted_endpoint(tmp_path, planted))
    if os.getuid() == 0:
        assert planted.stat().st_uid == NOBODY
        before = planted.stat().st_mode
        with pytest.raises(ServiceError, match="belongs to another user"):
            answering.start()
        assert planted.stat().st_mode == before  # left as it is
    else:  # our own folder, too open: tightened
        answering.start()
        answering.stop()
        assert planted.stat().st_mode & 0o777 == 0o700


def test_a_client_does_not_wait_for_a_squatter_that_never_challenges(tmp_path: Path) -> None:
    endpoint = _planted_endpoint(tmp_path, tmp_path / "run")
    (tmp_path / "run").mkdir()
    endpoint.key_file.parent.mkdir()
    endpoint.key_file.write_bytes(b"k" * 32)
    squatter = socket.socket(socket.AF_UNIX)
    squatter.bind(endpoint.address)
    squatter.listen()  # accepts, then says nothing
    try:
        assert connect(endpoint) is None  # after HANDSHAKE_TIMEOUT, not forever
    finally:
        squatter.close()


def test_a_wrong_key_is_refused_and_the_service_goes_on() -> None:
    with serving() as answering:
        with pytest.raises(Exception):  # noqa: B017 -- AuthenticationError or EOF
            Client(answering.endpoint.address, answering.endpoint.family, authkey=b"x" * 32)
        assert ask_service(OcrRequest("/after.png")) is not None
