"""Names and places of the bundle, shared by desklens.spec, build.py and the installer tests.

The Inno Setup script cannot import Python: build.py writes these names into version.iss
beside the bundle, and a test checks that the script uses them.
"""

from __future__ import annotations

import platform
import sys

from desktop import APP_NAME, __version__

APP_DIR = APP_NAME  # dist/DeskLens/: the one-folder bundle
EXE_NAME = "desklens"  # console program: the CLI, and the GUI on Linux and macOS
# Windows only: the same program linked as a windowed app (no console window behind the GUI);
# the Start-menu entry starts it.
GUI_EXE_NAME = "desklensw"
VERSION_ISS = "version.iss"  # written next to the bundle, included by installer/desklens.iss
# Copied to the top of the Linux bundle (beside the executable) from installer/linux/.
LINUX_EXTRAS = ("desklens.desktop", "install.sh")
ICON_NAME = "desklens.png"  # from desktop/assets, also at the top of the Linux bundle


def exe_file(name: str, system: str = sys.platform) -> str:
    return f"{name}.exe" if system == "win32" else name


def platform_tag() -> str:
    """`linux-x86_64`, `windows-amd64`, `macos-arm64`: the archive's platform part."""
    system = {"win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    return f"{system}-{platform.machine().lower()}"


def archive_name(version: str = __version__) -> str:
    extension = "zip" if sys.platform == "win32" else "tar.gz"
    return f"{APP_NAME}-{version}-{platform_tag()}.{extension}"
