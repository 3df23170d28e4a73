"""A hostile (or broken) hub and a models folder with links planted in it: `desklens models
--download` writes only inside its staging folder. Every test keeps a decoy folder outside the
models folder and asserts that not one of its files was changed, removed or replaced (inode,
size, mtime, content), with the real huggingface_hub client against devkit/hub_server.py."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from desktop.core.model_setup import download
from desktop.core.model_setup.errors import ModelRejected
from desktop.core.model_setup.names import check_name, inside, name_problem
from desktop.core.model_setup.staging import (
    DOWNLOAD_PREFIX,
    OLD_PREFIX,
    TMP_PREFIX,
    clean_leftovers,
    move_into_place,
    own_folder,
)
from devkit.hub_server import COMMIT, REPO_ID, hub_env
from devkit.hub_server import run_download as _run

TARGET = REPO_ID.split("/")[1]
DEAD_PID = 2**22 + 12345  # above Linux's pid_max: never a live process


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every entry below `folder` (links not followed): kind, inode, size, mtime, content."""
    seen = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root, name)
            info = path.lstat()
            content = path.read_bytes() if stat.S_ISREG(info.st_mode) else None
            seen[str(path)] = (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns, content)
    return seen


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A user's folder beside the models folder, with a file the hub may name."""
    folder = tmp_path / "outside"
    (folder / "sub").mkdir(parents=True)
    (folder / "notes.txt").write_bytes(b"my own notes, not a model file\n")
    (folder / "sub" / "config.json").write_text('{"mine": true}\n')
    return folder


def links_in(folder: Path) -> list[Path]:
    return [
        Path(root, name)
        for root, dirs, files in os.walk(folder)
        for name in dirs + files
        if Path(root, name).is_symlink()
    ]


def refusal(result) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, result.stderr
    assert "force_download" not in result.stdout + result.stderr
    return lines[0]


# -- names a listing may give --------------------------------------------------------------------

BAD_NAMES = [
    "/etc/passwd",
    "../notes.txt",
    "../../outside/notes.txt",
    "sub/../../x.bin",
    "./config.json",
    "a//b.json",
    "dir/",
    "C:/Windows/win.ini",
    "c:relative.bin",
    "file.bin:stream",
    "..\\..\\outside\\notes.txt",
    "sub\\x.bin",
    "nul\0.json",
    "esc\x1b[31m.json",
    "rtl\u202etxt.exe",
    "line\nbreak.json",
    "",
    "..",
    "x" * 600,
    "cafe\u0301.json",  # not NFC
]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_every_unsafe_name_is_refused_with_a_sentence_that_names_it(name):
    assert name_problem(name) is not None
    with pytest.raises(ModelRejected) as caught:
        download.Listing(REPO_ID, COMMIT, (download.RemoteFile(name, 1, None, None),))
    message = str(caught.value)
    assert repr(name)[:60] in message
    assert caught.value.exit_code == 3
    assert not any(ord(c) < 32 or c == "\u202e" for c in message)  # escaped, not raw


@pytest.mark.parametrize(
    "name", ["config.json", "sub/dir/model.bin", ".gitattributes", "name with spaces.txt", "é.json"]
)
def test_plain_relative_names_are_accepted(name):
    assert check_name(name, REPO_ID) == name


def test_a_path_through_a_link_inside_the_folder_is_refused(tmp_path, outside):
    folder = tmp_path / "staging"
    folder.mkdir()
    (folder / "sub").symlink_to(outside / "sub")
    (folder / "notes.txt").symlink_to(outside / "notes.txt")
    for name in ("sub/config.json", "notes.txt"):
        with pytest.raises(ModelRejected, match="symbolic link"):
            inside(folder, name)
    assert inside(folder, "fresh/file.bin") == folder / "fresh" / "file.bin"


@pytest.mark.parametrize(
    "name",
    [
        "ABSOLUTE",  # the decoy's own absolute path, same size and checksum as listed
        "../../outside/notes.txt",
        "C:/outside/notes.txt",
        "..\\..\\outside\\notes.txt",
        "notes\0.txt",
        "..",
    ],
)
def test_a_listing_with_an_unsafe_name_is_refused_before_anything_is_touched(
    hub, tmp_path, outside, name
):
    if name == "ABSOLUTE":
        name = str(outside / "notes.txt")
    hub.repos[REPO_ID].files[name] = (outside / "notes.txt").read_bytes()
    before = snapshot(outside)
    models = tmp_path / "models"
    result = _run(models, hub_env(hub.url, tmp_path))
    assert result.returncode == 3, result.stdout + result.stderr
    line = refusal(result)
    assert f"lists a file named {name!r}" in line and "nothing was downloaded" in line
    assert snapshot(outside) == before
    assert [r for r in hub.log if r.path.startswith("/api/")] == hub.log  # no file fetched
    assert list(models.iterdir()) == []  # not even a staging folder


# -- links planted where the download works ---------------------------------------------------


@pytest.mark.parametrize("planted", ["folder", "file", "dangling", "links inside"])
def test_a_link_at_the_staging_path_is_removed_never_written_through(
    hub, tmp_path, outside, planted
):
    models = tmp_path / "models"
    staging = models / f"{DOWNLOAD_PREFIX}{TARGET}"
    models.mkdir()
    if planted == "folder":
        staging.symlink_to(outside)
    elif planted == "file":
        staging.symlink_to(outside / "notes.txt")
    elif planted == "dangling":
        staging.symlink_to(outside / "missing")
    else:  # an earlier try's real folder, with links to the user's files inside it
        staging.mkdir()
        (staging / "config.json").symlink_to(outside / "sub" / "config.json")
        (staging / ".cache").symlink_to(outside / "sub")
    before = snapshot(outside)
    result = _run(models, hub_env(hub.url, tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert snapshot(outside) == before
    assert [p.name for p in models.iterdir()] == [TARGET]
    assert not (models / TARGET).is_symlink() and links_in(models) == []
    assert not (outside / "missing").exists()


@pytest.mark.parametrize("dangling", [False, True])
def test_force_over_a_linked_model_removes_the_link_and_not_what_it_points_to(
    hub, tmp_path, outside, dangling
):
    models = tmp_path / "models"
    models.mkdir()
    (models / TARGET).symlink_to(outside / ("missing" if dangling else "sub"))
    before = snapshot(outside)
    env = hub_env(hub.url, tmp_path)
    refused = _run(models, env)
    assert refused.returncode == 2 and "already exists" in refusal(refused)
    assert hub.log == []

    result = _run(models, env, "--force")
    assert result.returncode == 0, result.stdout + result.stderr
    assert snapshot(outside) == before
    assert [p.name for p in models.iterdir()] == [TARGET]  # no .desklens-old-… link left
    assert (models / TARGET).is_dir() and links_in(models) == []


def test_leftover_links_are_removed_as_links(tmp_path, outside):
    parent = tmp_path / "models"
    parent.mkdir()
    planted = [
        parent / f"{TMP_PREFIX}x-{DEAD_PID}",
        parent / f"{OLD_PREFIX}y-{DEAD_PID}",
        parent / f"{OLD_PREFIX}z-{DEAD_PID}",
    ]
    planted[0].symlink_to(outside)
    planted[1].symlink_to(outside / "notes.txt")
    planted[2].symlink_to(outside / "missing")
    before = snapshot(outside)
    assert sorted(clean_leftovers(parent)) == sorted(planted)
    assert list(parent.iterdir()) == [] and snapshot(outside) == before


def test_own_folder_and_move_into_place_never_follow_a_link(tmp_path, outside):
    before = snapshot(outside)
    staged = tmp_path / "staged"
    staged.symlink_to(outside)
    own_folder(staged, fresh=True)
    assert staged.is_dir() and not staged.is_symlink() and list(staged.iterdir()) == []
    target = tmp_path / "target"
    target.symlink_to(outside / "sub")
    move_into_place(staged, target, force=True)
    assert target.is_dir() and not target.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "target"]
    assert snapshot(outside) == before


# -- bytes other than listed ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "misbehaviour", ["longer", "shorter", "redirect to other bytes", "redirect, same size"]
)
def test_bytes_other_than_listed_are_refused_as_not_a_usable_model(
    hub, tmp_path, outside, misbehaviour
):
    name = "config.json"
    data = hub.repos[REPO_ID].files[name]
    if misbehaviour == "longer":
        hub.resize[name] = 4096
    elif misbehaviour == "shorter":
        hub.resize[name] = -10
    elif misbehaviour == "redirect to other bytes":
        hub.redirect[name] = b'{"model_type": "qwen3_vl", "evil": true}' * 3
    else:
        hub.redirect[name] = data.replace(b"qwen3_vl", b"qwen3_XX")
    before = snapshot(outside)
    models = tmp_path / "models"
    result = _run(models, hub_env(hub.url, tmp_path))
    assert result.returncode == 3, result.stdout + result.stderr
    line = refusal(result)
    assert name in line and "Nothing was installed" in line
    assert ("checksum" in line) == (misbehaviour == "redirect, same size")
    assert [p.name for p in models.iterdir()] == [f"{DOWNLOAD_PREFIX}{TARGET}"]
    assert not (models / f"{DOWNLOAD_PREFIX}{TARGET}" / name).exists()
    assert snapshot(outside) == before
