"""`desklens models --download`: the real huggingface_hub client against a stand-in hub on
127.0.0.1 (devkit/hub_server.py): verified, validated and listed; resumed by range after a
kill; refused when damaged; one sentence for a server that is down, a wrong name, a full disk."""

from __future__ import annotations

import errno
import json
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import pytest

from desktop.core.manifest import read_manifest, verify_model_dir
from desktop.core.model_registry import find_models
from desktop.core.model_setup import download
from desktop.core.model_setup.errors import FetchFailed
from desktop.core.model_setup.staging import DOWNLOAD_PREFIX
from devkit.hub_server import (
    COMMIT,
    LARGE_BYTES,
    LARGE_FILE,
    REPO_ID,
    ROOT,
    download_command,
    hub_env,
)
from devkit.hub_server import run_download as _run

TARGET = REPO_ID.split("/")[1]


def visible(models: Path) -> list[str]:
    return sorted(p.name for p in models.iterdir() if not p.name.startswith("."))


def one_sentence(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    [line] = [x for x in stderr.splitlines() if x.strip()]
    assert line.startswith("desklens models: ")
    return line


def test_a_full_download_is_verified_validated_and_listed(hub, tmp_path):
    models = tmp_path / "models"
    result = _run(models, hub_env(hub.url, tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    folder = models / TARGET
    manifest = verify_model_dir(folder, hashes=True)
    assert manifest.source == REPO_ID and manifest.imported
    assert manifest.weight_format == "int8"
    assert manifest.extra == {"revision": COMMIT, "endpoint": hub.url}
    assert LARGE_FILE in manifest.files and ".gitattributes" not in manifest.files
    assert not (folder / ".cache").exists()
    assert [p.name for p in models.iterdir()] == [TARGET]  # no staging left behind
    assert [e.name for e in find_models([models])] == [TARGET]
    assert "Validation passed" in result.stdout and "100%" in result.stdout
    assert f"Ready: {folder}" in result.stdout
    assert not hub.gets(".gitattributes")
    assert all(len(hub.gets(name)) == 1 for name in manifest.files)


def _wait_for_bytes_of_large_file(proc: subprocess.Popen, wanted: int) -> None:
    """Reads the child's JSON progress until `wanted` bytes of the large file are on disk."""
    for line in proc.stdout:
        event = json.loads(line)
        large_done = event.get("done", 0) - (event.get("total", 0) - LARGE_BYTES)
        if event["event"] == "progress" and event["file"] == LARGE_FILE and large_done >= wanted:
            return
        assert event["event"] in ("step", "progress"), event
    raise AssertionError(f"the download ended early: {proc.wait()}")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_a_download_killed_mid_file_resumes_by_range(hub, tmp_path, sig):
    models = tmp_path / "models"
    env = hub_env(hub.url, tmp_path)
    hub.stall = (LARGE_FILE, LARGE_BYTES - 100_000)
    proc = subprocess.Popen(
        download_command(models, "--progress", "json"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        _wait_for_bytes_of_large_file(proc, 2 << 20)
        proc.send_signal(sig)
        rest, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    if sig == signal.SIGINT:  # Ctrl+C: a clean exit that says how to continue
        assert proc.returncode == 130 and "Traceback" not in stderr, stderr
        last = json.loads(rest.splitlines()[-1])
        assert last["event"] == "error" and last["code"] == 130
        assert "Run the same command again to continue" in last["text"]
    assert visible(models) == []
    staging = models / f"{DOWNLOAD_PREFIX}{TARGET}"
    assert staging.is_dir()
    finished = {n for n in hub.repos[REPO_ID].files if n != LARGE_FILE and not n.startswith(".")}
    assert all((staging / name).is_file() for name in finished)

    hub.release.set()
    hub.stall = None
    hub.log.clear()
    again = _run(models, env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Resuming:" in again.stdout
    for name in finished:
        assert not hub.gets(name), f"{name} was fetched again"
    [resumed] = hub.gets(LARGE_FILE)
    assert resumed.range is not None and int(resumed.range[6:-1]) >= 2 << 20
    verify_model_dir(models / TARGET, hashes=True)
    assert [p.name for p in models.iterdir()] == [TARGET]


def test_a_file_damaged_on_the_server_is_refused(hub, tmp_path):
    models = tmp_path / "models"
    hub.corrupt = {"openvino_language_model.bin"}
    result = _run(models, hub_env(hub.url, tmp_path))
    assert result.returncode == 3
    line = one_sentence(result.stderr)
    assert "openvino_language_model.bin" in line and "checksum" in line
    assert visible(models) == [] and find_models([models]) == []
    assert len(hub.gets("openvino_language_model.bin")) == 2  # fetched anew once, then refused
    staging = models / f"{DOWNLOAD_PREFIX}{TARGET}"
    assert not (staging / "openvino_language_model.bin").exists()  # the next try refetches it


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_server_that_is_down_gets_one_sentence(tmp_path):
    models = tmp_path / "models"
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    result = _run(models, hub_env(endpoint, tmp_path))
    assert result.returncode == 4
    line = one_sentence(result.stderr)
    assert f"Could not reach {endpoint} (the connection was refused)" in line
    assert visible(models) == []


def test_an_unknown_repo_gets_one_sentence(hub, tmp_path):
    models = tmp_path / "models"
    result = _run(models, hub_env(hub.url, tmp_path), repo="nobody/nothing-here")
    assert result.returncode == 4
    assert "nobody/nothing-here was not found on" in one_sentence(result.stderr)
    assert visible(models) == []


def test_a_repo_without_openvino_files_is_refused_before_downloading(hub, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text('{"model_type": "qwen3_vl"}')
    (checkpoint / "model.safetensors").write_bytes(b"\0" * 64)
    hub.add("Qwen/Some-Checkpoint", checkpoint)
    result = _run(tmp_path / "models", hub_env(hub.url, tmp_path), repo="Qwen/Some-Checkpoint")
    assert result.returncode == 3
    assert "holds no OpenVINO model" in one_sentence(result.stderr)
    assert not [r for r in hub.log if "/resolve/" in r.path or r.path == "model.safetensors"]


def test_offline_mode_is_respected(hub, tmp_path):
    env = {**hub_env(hub.url, tmp_path), "HF_HUB_OFFLINE": "1"}
    result = _run(tmp_path / "models", env)
    assert result.returncode == 4
    assert "HF_HUB_OFFLINE" in one_sentence(result.stderr)
    assert hub.log == []


# -- the disk, with the listing given (no network needed) ----------------------------------------


def listing_of(folder: Path) -> download.Listing:
    from devkit.hub_server import Repo, git_blob_id

    files = []
    for name, data in Repo.of(folder).files.items():
        if not name.startswith("."):
            files.append(download.RemoteFile(name, len(data), None, git_blob_id(data)))
    return download.Listing(REPO_ID, COMMIT, tuple(sorted(files, key=lambda f: f.size)))


@pytest.fixture
def offline_listing(hub_folder, monkeypatch):
    monkeypatch.setattr(download, "list_repo", lambda repo, revision=None: listing_of(hub_folder))
    monkeypatch.setattr(download, "endpoint", lambda: "http://hub.invalid")


def test_a_full_disk_mid_download_says_so_and_keeps_the_finished_files(
    offline_listing, hub_folder, tmp_path, monkeypatch
):
    import huggingface_hub

    def fake_download(repo, name, *, revision, local_dir, **kwargs):
        if name == LARGE_FILE:
            raise OSError(errno.ENOSPC, "No space left on device")
        shutil.copy2(hub_folder / name, Path(local_dir) / name)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    models = tmp_path / "models"
    with pytest.raises(FetchFailed, match=r"The disk holding .* is full\. Free some space"):
        download.download_model(REPO_ID, models, say=lambda text: None)
    assert visible(models) == []
    staging = models / f"{DOWNLOAD_PREFIX}{TARGET}"
    assert (staging / "config.json").is_file()


def test_free_space_is_checked_before_anything_is_fetched(offline_listing, tmp_path, monkeypatch):
    import huggingface_hub

    fetched = []
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda *a, **k: fetched.append(a))
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage._replace(free=1 << 20))
    with pytest.raises(FetchFailed, match="Not enough free disk space"):
        download.download_model(REPO_ID, tmp_path / "models", say=lambda text: None)
    assert fetched == []


def test_an_existing_model_is_not_replaced_without_force(hub, tmp_path):
    models = tmp_path / "models"
    (models / TARGET).mkdir(parents=True)
    result = _run(models, hub_env(hub.url, tmp_path))
    assert result.returncode == 2
    assert "already exists" in one_sentence(result.stderr)
    assert hub.log == []


def test_cli_import_installs_a_converted_folder(tiny_ir, tmp_path):
    source = tmp_path / "Some-Model-ov"
    shutil.copytree(tiny_ir, source, ignore=shutil.ignore_patterns("desklens.json"))
    models = tmp_path / "models"
    result = subprocess.run(
        [*download_command(models)[:4], "--import", str(source), "--models-dir", str(models)],
        capture_output=True, text=True, env=hub_env("http://127.0.0.1:9", tmp_path), cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert read_manifest(models / source.name).imported
