"""`desklens ask/chat/models --server` as a user runs them (a child process) against a real
server: DeskLens's own `serve --api` on loopback with the tiny model."""

from __future__ import annotations

import os

import pytest
from cli_runner import desklens

from desktop.core.chat import GenerationSettings
from desktop.core.conversation import AskRequest, ConversationService
from desktop.core.images import load_image
from desktop.core.remote.config import ServerConfig
from desktop.core.remote.engine import RemoteEngine

QUESTION = "What does it say?"


@pytest.fixture
def env(api, tmp_path):
    """A user with no saved server: the key comes from the environment."""
    return {
        **os.environ,
        "DESKLENS_DATA_DIR": str(tmp_path / "data"),
        "DESKLENS_SERVER_KEY": api.token,
        "DESKLENS_SERVER": "",
    }


@pytest.fixture
def shot(sample_image, tmp_path):
    path = tmp_path / "shot.png"
    sample_image.save(path)
    return path


def server_answer(api, path, question: str, tokens: int) -> str:
    engine = RemoteEngine.connect(ServerConfig(api.url, api.token))
    try:
        request = AskRequest(
            question, (load_image(path),), GenerationSettings(max_new_tokens=tokens)
        )
        return ConversationService(engine).ask(request).answer.text
    finally:
        engine.close()


def test_ask_with_a_server_prints_the_servers_answer_and_says_where_it_went(api, env, shot):
    run = desklens("ask", str(shot), "-q", QUESTION, "--max-new-tokens", "10",
                   "--server", api.url, env=env)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip("\n") == server_answer(api, shot, QUESTION, 10)
    assert (
        f"on the server at 127.0.0.1:{api.server.port}: your questions and images go" in run.stderr
    )
    assert f"answered by the server at 127.0.0.1:{api.server.port}" in run.stderr
    assert api.token not in run.stderr + run.stdout


def test_the_server_can_come_from_the_environment(api, env, shot):
    env["DESKLENS_SERVER"] = api.url
    run = desklens("ask", str(shot), "-q", QUESTION, "--max-new-tokens", "6", "--json", env=env)
    assert run.returncode == 0, run.stderr
    assert '"server": "127.0.0.1:' in run.stdout


def test_chat_with_a_server_answers_a_follow_up(api, env, shot):
    run = desklens("chat", str(shot), "--server", api.url, "--max-new-tokens", "6",
                   stdin=f"{QUESTION}\nAnd then?\n", env=env)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("desklens> ") == 2
    assert "error" not in run.stderr


def test_models_lists_the_servers_models(api, env, engine):
    run = desklens("models", "--server", api.url, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[1:] == [f"  {engine.info.name}", "  desklens-ocr"]


def test_a_wrong_key_is_one_sentence_and_exit_1(api, env, shot):
    env["DESKLENS_SERVER_KEY"] = "dl-wrong-" + "x" * 40
    run = desklens("ask", str(shot), "-q", QUESTION, "--server", api.url, env=env)
    assert run.returncode == 1
    assert run.stderr.startswith("desklens: error: The server at 127.0.0.1:")
    assert "refused the key (401)" in run.stderr and "Traceback" not in run.stderr


def test_plain_http_to_a_public_address_is_refused_before_anything_is_sent(env, shot):
    run = desklens("ask", str(shot), "-q", QUESTION, "--server", "http://8.8.8.8:8000/v3", env=env)
    assert run.returncode == 2
    assert "unencrypted" in run.stderr and "Traceback" not in run.stderr
