"""A private X server (Xvfb) for the tests that need a real one: screen grabs, overlay windows,
real mouse and keyboard events through xdotool. The display number comes back through
-displayfd once the server accepts clients, so nothing waits on a guess. Backing store is on
(+bs): a window raised over another shows its pixels at once, not after a repaint."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field


class XServerMissing(RuntimeError):
    pass


@dataclass
class XServer:
    display: str
    process: subprocess.Popen
    size: tuple[int, int]
    env: dict[str, str] = field(default_factory=dict)

    def xdotool(self, *args: str | int) -> str:
        result = subprocess.run(
            ["xdotool", *map(str, args)], env=self.env, capture_output=True, text=True,
            timeout=60, check=True,
        )  # fmt: skip
        return result.stdout

    def drag(self, start: tuple[int, int], end: tuple[int, int], *, shift: bool = False) -> None:
        """A real press, moves and release (device pixels), Shift held if asked."""
        (x0, y0), (x1, y1) = start, end
        steps = [(x0 + (x1 - x0) * i // 4, y0 + (y1 - y0) * i // 4) for i in range(1, 5)]
        moves = [arg for x, y in steps for arg in ("mousemove", x, y)]
        keys_down = ["keydown", "shift"] if shift else []
        keys_up = ["keyup", "shift"] if shift else []
        self.xdotool("mousemove", x0, y0, *keys_down, "mousedown", "1", *moves, "mouseup", "1",
                     *keys_up)  # fmt: skip

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def start_xvfb(size: tuple[int, int] = (1400, 900)) -> XServer:
    for tool in ("Xvfb", "xdotool"):
        if shutil.which(tool) is None:
            raise XServerMissing(f"{tool} is not installed (scripts/dev.sh system_deps adds it)")
    read_end, write_end = os.pipe()
    process = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_end), "-screen", "0", f"{size[0]}x{size[1]}x24",
         "-nolisten", "tcp", "-noreset", "+bs"],
        pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    if not number:
        process.kill()
        raise XServerMissing("Xvfb did not start")
    display = f":{number}"
    env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
    env.pop("WAYLAND_DISPLAY", None)
    return XServer(display, process, size, env)
