"""The installer: the Inno Setup script's names and paths, the archive, the Linux menu entry,
the bundle pruning, and (marked `bundle`) the real PyInstaller bundle built and smoke-tested."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from unittest import mock

import pytest
from child_log import APP_STARTED, ChildLog

from desktop import APP_NAME, __version__
from devkit.hub_server import REPO_ID, hub_env
from installer import build, layout
from installer.prune import prune, without_dangling_links

ROOT = Path(__file__).resolve().parents[2]
ISS = ROOT / "installer" / "desklens.iss"
SPEC = ROOT / "installer" / "desklens.spec"
# Conversion-only packages that must never reach the bundle (and their heaviest dependencies).
FORBIDDEN = {
    "torch", "torchvision", "transformers", "optimum", "nncf", "triton", "sympy", "scipy", "nvidia"
}  # fmt: skip
# The bundle measured 514 MiB on Linux x86-64 (cv2 with FFmpeg and OpenBLAS alone is 152 MiB);
# this budget catches a heavy package sneaking in.
SIZE_BUDGET_MIB = 560


# -- Inno Setup script -----------------------------------------------------------------------------


def iss_defines(text: str) -> dict[str, str]:
    return dict(re.findall(r'^\s*#define (\w+) "([^"]*)"', text, re.MULTILINE))


def iss_paths(iss_text: str, defines: dict[str, str], dist: Path) -> list[Path]:
    """Every Source: and Filename: path of the script, with ISPP names and {app} filled in."""
    values = {**defines, "DistDir": str(dist)}
    paths = []
    for raw in re.findall(r'(?:Source|Filename): "([^"]+)"', iss_text):
        text = re.sub(r"\{#(\w+)\}", lambda m: values[m[1]], raw)
        text = text.replace("{app}", str(dist / defines["AppDirName"]))
        paths.append(Path(text.replace("\\", "/").removesuffix("/*")))
    return paths


def test_version_iss_carries_the_package_version():
    defines = iss_defines(build.version_iss_text())
    assert defines["AppVersion"] == __version__
    assert defines["AppName"] == APP_NAME
    assert defines["AppDirName"] == layout.APP_DIR
    assert defines["AppExeName"] == f"{layout.GUI_EXE_NAME}.exe"


def test_iss_includes_version_iss_and_names_nothing_itself():
    text = ISS.read_text(encoding="utf-8")
    assert f'#include AddBackslash(DistDir) + "{layout.VERSION_ISS}"' in text
    used = set(re.findall(r"\{#(\w+)\}", text))
    assert used == {*iss_defines(build.version_iss_text()), "DistDir"}
    assert __version__ not in text and "desklens.exe" not in text.lower()


def test_iss_offers_open_with_for_every_file_type_the_app_reads():
    from desktop.core.file_types import IMAGE_EXTENSIONS, PDF_EXTENSION

    offered = re.findall(r'SupportedTypes"; .*ValueName: "([^"]+)"', ISS.read_text())
    assert sorted(offered) == sorted(IMAGE_EXTENSIONS | {PDF_EXTENSION})
    assert '"""{app}\\{#AppExeName}"" ""%1"""' in ISS.read_text()


def test_iss_paths_exist_in_the_windows_bundle_layout(tmp_path):
    """The layout the spec produces on Windows, from the names the spec builds it with."""
    spec = SPEC.read_text(encoding="utf-8")
    assert "name=layout.APP_DIR" in spec
    assert "executable(layout.EXE_NAME, console=True)" in spec
    assert "executable(layout.GUI_EXE_NAME, console=False)" in spec
    bundle = tmp_path / layout.APP_DIR
    bundle.mkdir()
    for name in (layout.EXE_NAME, layout.GUI_EXE_NAME):
        (bundle / layout.exe_file(name, "win32")).touch()
    build.write_version_iss(tmp_path)

    paths = iss_paths(
        ISS.read_text(encoding="utf-8"), iss_defines(build.version_iss_text()), tmp_path
    )
    assert bundle in paths and bundle / f"{layout.GUI_EXE_NAME}.exe" in paths
    assert all(path.exists() for path in paths), paths


# -- archive and Linux desktop entry ---------------------------------------------------------------


def fake_bundle(folder: Path) -> Path:
    bundle = folder / layout.APP_DIR
    (bundle / "_internal").mkdir(parents=True)
    exe = bundle / layout.EXE_NAME
    exe.write_text('#!/bin/sh\necho bundle-ran "$@"\n')
    exe.chmod(0o755)
    (bundle / "_internal" / "libreal.so.1").write_text("library")
    (bundle / "_internal" / "libreal.so").symlink_to("libreal.so.1")
    for name in layout.LINUX_EXTRAS:
        shutil.copy2(ROOT / "installer" / "linux" / name, bundle / name)
    shutil.copy2(ROOT / "desktop" / "assets" / layout.ICON_NAME, bundle / layout.ICON_NAME)
    return bundle


def test_tar_archive_unpacks_to_the_bundle_folder_with_modes_and_links(tmp_path):
    bundle = fake_bundle(tmp_path / "dist")
    archive = build.make_archive(bundle, tmp_path / "out.tar.gz")
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert all(name.split("/")[0] == layout.APP_DIR for name in members)
    assert members[f"{layout.APP_DIR}/{layout.EXE_NAME}"].mode & stat.S_IXUSR
    link = members[f"{layout.APP_DIR}/_internal/libreal.so"]
    assert link.issym() and link.linkname == "libreal.so.1"


def test_zip_archive_unpacks_to_the_bundle_folder(tmp_path):
    bundle = fake_bundle(tmp_path / "dist")
    (bundle / "_internal" / "libreal.so").unlink()  # Windows bundles have no symlinks
    archive = build.make_archive(bundle, tmp_path / "out.zip")
    names = zipfile.ZipFile(archive).namelist()
    assert f"{layout.APP_DIR}/{layout.EXE_NAME}" in names
    assert f"{layout.APP_DIR}/_internal/libreal.so.1" in names


def test_archive_name_has_version_and_platform():
    name = layout.archive_name()
    assert name.startswith(f"{APP_NAME}-{__version__}-{layout.platform_tag()}.")
    assert name.endswith(".zip" if sys.platform == "win32" else ".tar.gz")


def desktop_entry(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:] if line and not line.startswith("#"))


def test_linux_install_script_adds_and_removes_the_menu_entry(tmp_path):
    bundle = fake_bundle(tmp_path / "unpacked dir")  # a space, as in many home folders
    home = tmp_path / "home"
    env = {"PATH": os.environ["PATH"], "HOME": str(home)}
    run = subprocess.run(
        ["sh", str(bundle / "install.sh")], env=env, capture_output=True, text=True, check=True
    )
    assert "added" in run.stdout
    entry = desktop_entry(home / ".local/share/applications/desklens.desktop")
    assert entry["Exec"] == f'"{bundle / layout.EXE_NAME}" %F'
    assert entry["TryExec"] == str(bundle / layout.EXE_NAME)
    assert entry["Type"] == "Application" and entry["Name"] == APP_NAME
    icon = home / ".local/share/icons/hicolor/256x256/apps" / layout.ICON_NAME
    assert entry["Icon"] == Path(layout.ICON_NAME).stem and icon.is_file()
    launched = subprocess.run(
        [str(home / ".local/bin/desklens"), "--version"], capture_output=True, text=True
    )
    assert launched.stdout.strip() == "bundle-ran --version"

    subprocess.run(["sh", str(bundle / "install.sh"), "--uninstall"], env=env, check=True)
    assert not (home / ".local/share/applications/desklens.desktop").exists()
    assert not icon.exists() and not (home / ".local/bin/desklens").exists()
    assert (bundle / layout.EXE_NAME).is_file()  # the bundle itself is left alone


# -- pruning ---------------------------------------------------------------------------------------


def test_prune_removes_dropped_plugins_and_the_libraries_only_they_link():
    links = {
        "/src/qgtk3.so": ["libgtk.so", "libcairo.so", "libQt6Gui.so"],
        "/src/libcairo.so": ["libpixman.so"],
        "/src/qxcb.so": ["libQt6Gui.so", "libxcb.so"],
        "/src/libQt6Gui.so": ["libfreetype.so"],
        "/src/libfreetype.so": [],
        "/src/libpixman.so": [],
        "/src/libxcb.so": [],
        "/src/libdlopened.so": [],  # linked by nothing: kept, something loads it at run time
    }
    entries = [
        ("plugins/platformthemes/qgtk3.so", "/src/qgtk3.so", "BINARY"),
        ("plugins/platforms/qxcb.so", "/src/qxcb.so", "BINARY"),
        *((Path(src).name, src, "BINARY") for src in links if "/lib" in src),
    ]
    kept, removed = prune(entries, lambda path: "platformthemes/" in path, links.__getitem__)
    assert {Path(e[0]).name for e in removed} == {"qgtk3.so", "libcairo.so", "libpixman.so"}
    assert {Path(e[0]).name for e in kept} == {
        "qxcb.so", "libQt6Gui.so", "libfreetype.so", "libxcb.so", "libdlopened.so"
    }  # fmt: skip


def test_links_to_removed_files_are_dropped():
    entries = [
        ("libQt6Gui.so.6", "PySide6/Qt/lib/libQt6Gui.so.6", "SYMLINK"),
        ("libQt6WaylandClient.so.6", "PySide6/Qt/lib/libQt6WaylandClient.so.6", "SYMLINK"),
        ("PySide6/Qt/lib/libicu.so", "libicu.so.73", "SYMLINK"),
        ("desktop/assets/desklens.png", "/src/desklens.png", "DATA"),
    ]
    present = ["PySide6/Qt/lib/libQt6Gui.so.6", "PySide6/Qt/lib/libicu.so.73"]
    assert [e[0] for e in without_dangling_links(entries, present)] == [
        "libQt6Gui.so.6", "PySide6/Qt/lib/libicu.so", "desktop/assets/desklens.png"
    ]  # fmt: skip


# -- the real bundle -------------------------------------------------------------------------------


def user_env(home: Path) -> dict[str, str]:
    """A fresh user: data in the default per-user folder, no DeskLens overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKLENS_")}
    env.update(HOME=str(home), USERPROFILE=str(home), LOCALAPPDATA=str(home / "AppData"))
    env.pop("XDG_DATA_HOME", None)
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def user_data_dir(env: dict[str, str]) -> Path:
    from desktop.core import paths

    with mock.patch.dict(os.environ, env, clear=True):
        return paths.user_data_dir()


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns)
        for p in folder.rglob("*")
    }


@pytest.mark.bundle
def test_bundle_self_test_passes_from_a_read_only_folder(unpacked, tiny_ir, tmp_path):
    env = user_env(tmp_path / "home")
    shutil.copytree(tiny_ir, user_data_dir(env) / "models" / "tiny")
    before = snapshot(unpacked)
    for path in (unpacked, *unpacked.rglob("*")):
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o222)
    try:
        exe = unpacked / layout.exe_file(layout.EXE_NAME)
        result = subprocess.run(
            [str(exe), "--self-test", "--model", "tiny"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip
        models = subprocess.run(
            [str(exe), "models"], capture_output=True, text=True, env=env, timeout=120
        )
    finally:
        for path in (unpacked, *unpacked.rglob("*")):
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o200)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    checks = re.findall(r"^(PASS|FAIL)  (\S+)", result.stdout, re.MULTILINE)
    assert checks == [("PASS", name) for name in (
        "runtime", "libraries", "qt", "ocr", "data", "model", "answer"
    )], output  # fmt: skip
    assert "(bundle:" in result.stdout and str(user_data_dir(env)) in result.stdout
    # The bundle ships no INT8 OCR models by default (build.py --ocr-int8 none): the first OCR
    # builds them into the user data folder, never into the read-only bundle, and checks them
    # against FP32 on this CPU (which of them it then runs is this CPU's verdict).
    assert (user_data_dir(env) / "ocr-int8").is_dir(), output
    verdict = r"^PASS  ocr .*; INT8 reads? .* FP32 on .*: (INT8|FP32) (models|detector)"
    assert re.search(verdict, result.stdout, re.MULTILINE), output
    assert models.returncode == 0 and "tiny" in models.stdout
    assert str(user_data_dir(env) / "models" / "tiny") in models.stdout
    # Nothing was written into the installed folder (root ignores the read-only bits).
    assert snapshot(unpacked) == before


@pytest.mark.bundle
def test_bundle_downloads_a_model_from_a_local_hub(unpacked, hub, tmp_path):
    """A new user of the bundle: `desklens models --download` (what the first-run panel's
    Download runs) fetches, validates and lists the model; no Python or torch needed."""
    home = tmp_path / "home"
    env = {**user_env(home), **{k: v for k, v in hub_env(hub.url, home).items() if "HF_" in k}}
    env.pop("HF_HUB_OFFLINE", None)
    exe = unpacked / layout.exe_file(layout.EXE_NAME)
    result = subprocess.run(
        [str(exe), "models", "--download", REPO_ID],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    folder = user_data_dir(env) / "models" / REPO_ID.split("/")[1]
    assert f"Ready: {folder}" in result.stdout
    listed = subprocess.run([str(exe), "models"], capture_output=True, text=True, env=env)
    assert str(folder) in listed.stdout and "unusable" not in listed.stdout


@pytest.mark.bundle
def test_bundle_has_no_conversion_packages(built):
    from PyInstaller.archive.readers import pkg_archive_contents

    bundle = built / layout.APP_DIR
    # Name parts of every file and folder: packages, their .libs and .dist-info, libtorch*.so.
    on_disk = {t for p in bundle.rglob("*") for t in re.split(r"[-._]", p.name.lower())}
    assert not on_disk & FORBIDDEN and not any(t.startswith("libtorch") for t in on_disk)
    modules = pkg_archive_contents(str(bundle / layout.exe_file(layout.EXE_NAME)))
    assert not {name.split(".")[0] for name in modules} & FORBIDDEN
    assert "desktop.selftest" in modules and "desktop.cli.gui_cmd" in modules


@pytest.mark.bundle
def test_bundle_layout_size_and_installer_inputs(built):
    bundle = built / layout.APP_DIR
    assert build.folder_size(bundle) < SIZE_BUDGET_MIB * 2**20
    defines = iss_defines((built / layout.VERSION_ISS).read_text(encoding="utf-8"))
    assert defines["AppVersion"] == __version__ and (built / defines["AppDirName"]).is_dir()
    assert (bundle / layout.exe_file(layout.EXE_NAME)).is_file()
    internal = bundle / "_internal"
    assert (internal / "desktop" / "assets" / layout.ICON_NAME).is_file()
    assert any((internal / "rapidocr" / "models").glob("*.onnx"))
    assert any((internal / "openvino_tokenizers" / "lib").iterdir())
    ov_libs = {p.name for p in (internal / "openvino" / "libs").iterdir()}
    assert any("intel_cpu_plugin" in n for n in ov_libs)
    assert any("ir_frontend" in n for n in ov_libs) and any("onnx_frontend" in n for n in ov_libs)
    assert not any("pytorch_frontend" in n or "tensorflow_frontend" in n for n in ov_libs)
    if sys.platform.startswith("linux"):
        platforms = {p.name for p in (internal / "PySide6/Qt/plugins/platforms").iterdir()}
        assert platforms == {"libqoffscreen.so", "libqxcb.so"}
        assert os.access(bundle / "install.sh", os.X_OK)
        assert desktop_entry(bundle / "desklens.desktop")["Icon"] == "desklens"
        assert not [p for p in bundle.rglob("*") if p.is_symlink() and not p.exists()]


@pytest.mark.bundle
def test_bundle_gui_starts_offscreen(unpacked, tmp_path):
    """The desktop app starts from the bundle (no import or plugin error), shows its window
    and closes cleanly when the session ends it."""
    gui = subprocess.Popen(
        [str(unpacked / layout.exe_file(layout.EXE_NAME))],
        env=user_env(tmp_path / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log = ChildLog(gui, APP_STARTED)
    try:
        assert log.wait(180), log.text()
        gui.terminate()
        assert gui.wait(120) == 0, log.text()
    finally:
        gui.kill()
    assert "SIGTERM received: closing" in log.text()


def test_int8_ocr_models_are_built_for_the_bundle_unless_told_not_to(tmp_path):
    from desktop.core.ocr.model_files import MANIFEST_NAME, _current_int8
    from installer import build

    assert build.ocr_int8_folder("none", tmp_path / "work") is None
    made = build.ocr_int8_folder("make", tmp_path / "work")
    assert made is not None and (made / MANIFEST_NAME).is_file()
    assert _current_int8(made) is not None  # what the bundled app accepts at run time
