"""What the suite needs from the system, named in one sentence each when it is missing (a fresh
machine without them failed deep inside the OCR tests with a FontMissing traceback).
scripts/dev.sh's system_deps installs all of them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from desktop.core.ocr.rendered_pages import (
    FONT_FILES,
    FontMissing,
    font,
    font_package,
    font_path,
    missing_font_sentence,
)

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"Xvfb": "xvfb", "xdotool": "xdotool", "dbus-daemon": "dbus-daemon"}


def _system_deps() -> set[str]:
    script = (ROOT / "scripts" / "dev.sh").read_text(encoding="utf-8")
    block = re.search(r"local pkgs=\((.*?)\)", script, re.DOTALL)
    assert block, "scripts/dev.sh has no system_deps package list"
    return set(block.group(1).split())


@pytest.mark.parametrize("key", sorted(FONT_FILES))
def test_every_rendering_font_is_installed(key):
    assert font_path(key) is not None, missing_font_sentence(key)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_every_tool_the_tests_start_is_installed(tool):
    assert shutil.which(tool), f"{tool} is not installed: install Debian's {TOOLS[tool]}."


def test_system_deps_installs_every_font_and_tool_package():
    packages = {font_package(key) for key in FONT_FILES} | set(TOOLS.values())
    assert packages <= _system_deps(), packages - _system_deps()


def test_a_missing_font_is_one_sentence_naming_its_package(monkeypatch):
    import desktop.core.ocr.rendered_pages as pages

    monkeypatch.setattr(pages, "FONT_DIRS", ())
    monkeypatch.setitem(pages.FONT_FILES, "serif", "liberation/NoSuchFace-Regular.ttf")
    with pytest.raises(FontMissing, match=r"NoSuchFace-Regular\.ttf .* fonts-liberation"):
        font("serif", 12, required=True)
