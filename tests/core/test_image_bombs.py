"""Images whose headers promise more pixels than they hold (decompression bombs, in each
container the intake reads) are refused from the header, before pixel memory is allocated:
checked in a child process under a 1 GB address-space limit, where decoding them would fail."""

from __future__ import annotations

import io
import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 1 << 30
SIDE = 60_000  # 3.6 gigapixels: ~11 GB as RGB


def _png_claiming(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (1, 1), "white").save(buffer, "PNG")
    data = bytearray(buffer.getvalue())
    ihdr = bytearray(data[12:29])  # b"IHDR" + 13 bytes
    ihdr[4:12] = struct.pack(">II", width, height)
    data[12:29] = ihdr
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(ihdr)))
    return bytes(data)


def _gif_claiming(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    frames = [Image.new("P", (1, 1), n) for n in range(2)]
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    data = bytearray(buffer.getvalue())
    data[6:10] = struct.pack("<HH", width, height)  # the logical screen
    descriptor = data.index(b",")  # the first frame's image descriptor
    data[descriptor + 5 : descriptor + 9] = struct.pack("<HH", width, height)
    return bytes(data)


def _tiff_with_a_huge_second_frame() -> bytes:
    """Frame 1 is small, frame 2 claims 3.6 GP: only the first frame is ever decoded."""
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(
        buffer, "TIFF", save_all=True, append_images=[Image.new("RGB", (2, 2), "black")]
    )
    data = bytearray(buffer.getvalue())
    second = data.rfind(struct.pack("<HHI", 256, 3, 1))  # ImageWidth of the last IFD, SHORT
    if second > 0:
        data[second + 8 : second + 10] = struct.pack("<H", SIDE)
    return bytes(data)


def _load_in_a_limited_child(path: Path) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\n"
        "from desktop.core.images import ImageError, load_image\n"
        "try:\n    image = load_image(sys.argv[1])\n    print('loaded', image.size)\n"
        "except ImageError as exc:\n    print('refused:', exc)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT,
        timeout=120, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT)),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("tall.png", _png_claiming(1, 2_000_000_000)),
        ("square.png", _png_claiming(SIDE, SIDE)),
        ("strip.png", _png_claiming(2_000_000, 60)),  # 120 MP: over the 100 MP limit
        ("square.gif", _gif_claiming(SIDE, SIDE)),
    ],
)
def test_a_header_promising_too_many_pixels_is_refused_before_decoding(
    tmp_path: Path, name: str, data: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    result = _load_in_a_limited_child(path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f'refused: "{name}" is too large to open safely'), result.stdout
    assert "Traceback" not in result.stderr


def test_only_the_first_frame_of_a_tiff_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "pages.tiff"
    path.write_bytes(_tiff_with_a_huge_second_frame())
    result = _load_in_a_limited_child(path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "loaded (8, 8)"
