"""Can Qt open a window here? Checked before the first QApplication, because Qt's own answer
to a missing platform is abort() (SIGABRT and a core dump), with the reason buried in a log.

On Linux the X11 platform plugin (xcb) needs libxcb-* libraries that minimal desktops lack;
each is looked for by its soname (what the plugin's loader asks for), so the sentence names
every missing one and the Debian/Ubuntu packages that provide them. A Wayland session counts
only when its compositor's socket answers (WAYLAND_DISPLAY naming a socket that is gone made
Qt fall back to X11 and abort); `forget_dead_wayland` drops such a WAYLAND_DISPLAY so Qt uses
X11 where an X server answers. A platform chosen with QT_QPA_PLATFORM must be one PySide6
ships; offscreen, vnc and the like are then left to Qt.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Mapping, MutableMapping
from pathlib import Path

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
        return _chosen_platform_problem(chosen, env)
    if not chosen and env.get("WAYLAND_DISPLAY"):
        if wayland_answers(env):
            return None  # Qt tries its Wayland plugin first
        if not env.get("DISPLAY"):
            return (
                f"DeskLens cannot open its window: WAYLAND_DISPLAY={env['WAYLAND_DISPLAY']} "
                "names no running Wayland compositor (none answered within "
                f"{WAYLAND_ANSWER_S:g} s) and DISPLAY is not set. Start it from a "
                "desktop session, or use the command line (`desklens --help`)."
            )
    return _x11_problem(env)


def _x11_problem(env: Mapping[str, str]) -> str | None:
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


def _chosen_platform_problem(chosen: str, env: Mapping[str, str]) -> str | None:
    available = qt_platforms()
    if available is not None and chosen.split("-")[0] not in available:
        return (
            f"DeskLens cannot open its window: QT_QPA_PLATFORM={chosen} is not a platform this "
            f"Qt has (it has {', '.join(sorted(available))}). Unset QT_QPA_PLATFORM or choose "
            "one of those."
        )
    if chosen.startswith("wayland") and not wayland_answers(env):
        return (
            f"DeskLens cannot open its window: QT_QPA_PLATFORM={chosen} but no Wayland "
            f"compositor answers at WAYLAND_DISPLAY={env.get('WAYLAND_DISPLAY') or 'wayland-0'}. "
            "Start it from a desktop session, or use the command line (`desklens --help`)."
        )
    return None  # offscreen, vnc...: the user picked it


def qt_platforms() -> set[str] | None:
    """The platform plugins PySide6 ships (xcb, wayland, offscreen...), or None when its
    plugin folder cannot be found (then Qt decides)."""
    spec = importlib.util.find_spec("PySide6")
    for root in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(root, "Qt", "plugins", "platforms")
        if folder.is_dir():
            names = {re.sub(r"^(lib)?q", "", p.name.split(".")[0]) for p in folder.iterdir()}
            return {name.split("-")[0] for name in names if name}
    return None


def wayland_socket(env: Mapping[str, str]) -> Path | None:
    """Where the Wayland client library looks for the compositor (None: nowhere to look)."""
    name = env.get("WAYLAND_DISPLAY") or "wayland-0"
    if name.startswith("/"):
        return Path(name)
    runtime = env.get("XDG_RUNTIME_DIR")
    return Path(runtime, name) if runtime else None


def wayland_answers(env: Mapping[str, str]) -> bool:
    """True when a compositor answers on the socket WAYLAND_DISPLAY names: it is asked for a
    wl_display.sync and must reply within WAYLAND_ANSWER_S (a socket that accepts and then
    stays silent would hang Qt's Wayland plugin with no word)."""
    path = wayland_socket(env)
    try:
        if path is None or not stat.S_ISSOCK(path.stat().st_mode):
            return False
    except OSError:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(WAYLAND_ANSWER_S)
        try:
            probe.connect(str(path))
            probe.sendall(_WAYLAND_SYNC)
            return len(probe.recv(8)) > 0
        except OSError:  # refused, or silent past the timeout
            return False


# wl_display (object 1) request 0, sync, with the new wl_callback's id 2: 12 bytes, native
# byte order (the protocol's). A compositor replies with the callback's `done` at once.
_WAYLAND_SYNC = struct.pack("=III", 1, (12 << 16) | 0, 2)
WAYLAND_ANSWER_S = 2.0


def forget_dead_wayland(environ: MutableMapping[str, str] | None = None) -> None:
    """Drops a WAYLAND_DISPLAY whose compositor does not answer (unless the user chose a
    platform), so that Qt goes straight to X11 instead of failing on Wayland first."""
    env = os.environ if environ is None else environ
    dead = env.get("WAYLAND_DISPLAY") and not wayland_answers(env)
    if dead and not env.get("QT_QPA_PLATFORM"):
        del env["WAYLAND_DISPLAY"]


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
    """True when an X server at DISPLAY ("[HOST]:N[.S]") replies to a connection setup within
    X_ANSWER_S, in all (a refusal of the setup counts: a server is there). A socket that
    accepts and stays silent hung Qt with Ctrl+C ignored, and a host that is not there made
    Qt abort; a DISPLAY of another form is left to Qt."""
    match = re.fullmatch(r"(?P<host>[^:]*):(?P<number>\d+)(?:\.\d+)?", display)
    if match is None:
        return True
    deadline = time.monotonic() + X_ANSWER_S
    host, number = match["host"], int(match["number"])
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        targets: list[tuple[int, str | tuple]] = [
            (socket.AF_UNIX, at) for at in ("\0" + path, path)
        ]
    else:
        targets = _tcp_addresses(host, 6000 + number, deadline)
    return any(_x_replies(family, address, deadline) for family, address in targets)


def _tcp_addresses(host: str, port: int, deadline: float) -> list[tuple[int, str | tuple]]:
    """The host's addresses, looked up within the deadline (a resolver may hang for long)."""
    found: list[tuple[int, str | tuple]] = []

    def look_up() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            return
        found.extend((info[0], info[4]) for info in infos)

    lookup = threading.Thread(target=look_up, daemon=True)
    lookup.start()
    lookup.join(max(0.0, deadline - time.monotonic()))
    return list(found) if not lookup.is_alive() else []


def _x_replies(family: int, address: str | tuple, deadline: float) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.settimeout(max(0.01, deadline - time.monotonic()))
            probe.connect(address)
            probe.sendall(_X_SETUP)
            return len(probe.recv(1)) > 0  # 0 failed, 1 success, 2 authenticate: an answer
        except OSError:  # refused, gone, or silent past the deadline
            return False


# The X11 connection setup, little-endian ("l"), protocol 11.0, no authorization: every X
# server replies to it at once, if only to refuse it.
_X_SETUP = struct.pack("<cxHHHHxx", b"l", 11, 0, 0, 0)
X_ANSWER_S = 2.0
