"""Can Qt open a window here? Checked before the first QApplication, because Qt's own answer
to a missing platform is abort() (SIGABRT and a core dump), with the reason buried in a log.

On Linux the X11 platform plugin (xcb) needs libxcb-* libraries that minimal desktops lack;
each is looked for by its soname (what the plugin's loader asks for), so the sentence names
every missing one and the Debian/Ubuntu packages that provide them. Other platforms, and a
platform chosen with QT_QPA_PLATFORM (offscreen, wayland...), are left to Qt.
"""

from __future__ import annotations

import ctypes
import os
import re
import socket
import sys
from collections.abc import Mapping

# soname -> Debian/Ubuntu package: what PySide6's xcb plugin (libqxcb.so and
# libQt6XcbQpa.so) links against beyond Qt itself.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libfontconfig.so.1": "libfontconfig1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
}


def platform_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """One sentence saying why no window can open, or None when Qt should manage."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return None
    chosen = env.get("QT_QPA_PLATFORM", "").split(":")[0].split(";")[0]
    if chosen and chosen != "xcb":
        return None  # offscreen, wayland, vnc...: the user picked it
    if not chosen and env.get("WAYLAND_DISPLAY"):
        return None  # Qt tries its Wayland plugin first
    missing = missing_libraries()
    if missing:
        packages = " ".join(sorted({XCB_LIBRARIES[name] for name in missing}))
        return (
            "DeskLens cannot open its window: the X11 support of Qt needs libraries that are "
            f"not installed ({', '.join(missing)}). Install them with "
            f"`sudo apt-get install {packages}` (or start DeskLens with `scripts/dev.sh app`, "
            "which does), then start it again."
        )
    display = env.get("DISPLAY", "")
    if not display:
        return (
            "DeskLens cannot open its window: no display was found (DISPLAY is not set). "
            "Start it from a desktop session, or use the command line (`desklens --help`)."
        )
    if not x_server_answers(display):
        return (
            f"DeskLens cannot open its window: no X server answers at DISPLAY={display}. "
            "Start it from a desktop session, or use the command line (`desklens --help`)."
        )
    return None


def missing_libraries(names: Mapping[str, str] | None = None) -> list[str]:
    """The sonames among `names` (default XCB_LIBRARIES) that the dynamic loader cannot find."""
    missing = []
    for soname in names or XCB_LIBRARIES:
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.append(soname)
    return missing


def x_server_answers(display: str) -> bool:
    """True when a local display (":N") has an X server listening; remote displays
    (host:N, over ssh) are not probed and count as answering."""
    match = re.fullmatch(r"(?:unix)?:(\d+)(?:\.\d+)?", display)
    if match is None:
        return True
    path = f"/tmp/.X11-unix/X{match.group(1)}"
    for address in ("\0" + path, path):  # Linux X servers listen on both
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.settimeout(2)
            try:
                probe.connect(address)
            except OSError:
                continue
            return True
    return False
