"""Image intake: formats, colour modes, orientation, damaged input, size guard, folders."""

from __future__ import annotations

import io
import struct
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageFile

from desktop.core.images import (
    IMAGE_EXTENSIONS,
    MAX_PIXELS,
    PASTED_IMAGE_NAME,
    ImageError,
    LoadedImage,
    collect_image_files,
    load_image,
)

RED, GREEN, BLUE, WHITE, BLACK = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255,) * 3, (0,) * 3
EXIF_ORIENTATION = 0x0112


def encode(image: Image.Image, fmt: str, **params: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **params)
    return buffer.getvalue()


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def quadrants() -> Image.Image:
    """8x8 RGB picture with four coloured quadrants, so any wrong transform shows."""
    image = Image.new("RGB", (8, 8), WHITE)
    image.paste(RED, (0, 0, 4, 4))
    image.paste(GREEN, (4, 0, 8, 4))
    image.paste(BLUE, (0, 4, 4, 8))
    return image


def noise(size: tuple[int, int] = (64, 64)) -> Image.Image:
    pixels = np.random.default_rng(7).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def colours(image: Image.Image) -> set[tuple[int, ...]]:
    return {colour for _count, colour in image.getcolors()}


def close_to(actual: tuple[int, ...], expected: tuple[int, ...], tolerance: int = 40) -> bool:
    return all(abs(a - e) <= tolerance for a, e in zip(actual, expected, strict=True))


# --- formats -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "suffix", "params"),
    [
        ("PNG", ".png", {}),
        ("BMP", ".bmp", {}),
        ("TIFF", ".tiff", {}),
        ("TIFF", ".tif", {"compression": "tiff_lzw"}),
        ("WEBP", ".webp", {"lossless": True}),
    ],
)
def test_lossless_formats_give_the_same_pixels_and_digest_as_memory(
    tmp_path: Path, fmt: str, suffix: str, params: dict
) -> None:
    original = quadrants()
    path = write(tmp_path, f"picture{suffix}", encode(original, fmt, **params))

    from_file = load_image(path)
    from_memory = load_image(original)

    assert from_file.image.mode == "RGB"
    assert from_file.name == f"picture{suffix}"
    assert from_file.image.tobytes() == original.tobytes()
    assert from_file.digest == from_memory.digest


def test_digest_is_the_same_for_file_bytes_and_pil_image_and_differs_for_other_pixels(
    tmp_path: Path,
) -> None:
    png = encode(quadrants(), "PNG")
    digests = {
        load_image(write(tmp_path, "a.png", png)).digest,
        load_image(png).digest,
        load_image(Image.open(io.BytesIO(png))).digest,
    }
    assert len(digests) == 1
    changed = quadrants()
    changed.putpixel((7, 7), (254, 255, 255))
    assert load_image(changed).digest not in digests


def test_digest_depends_on_the_shape_not_only_the_bytes() -> None:
    wide = Image.new("RGB", (4, 2), RED)
    tall = Image.new("RGB", (2, 4), RED)
    assert wide.tobytes() == tall.tobytes()
    assert load_image(wide).digest != load_image(tall).digest


def test_jpeg_loads_with_close_colours(tmp_path: Path) -> None:
    path = write(tmp_path, "photo.jpg", encode(quadrants().resize((64, 64)), "JPEG", quality=95))
    loaded = load_image(path)
    assert loaded.size == (64, 64)
    assert close_to(loaded.image.getpixel((10, 10)), RED)
    assert close_to(loaded.image.getpixel((50, 50)), WHITE)


def test_animated_gif_gives_its_first_frame(tmp_path: Path) -> None:
    frames = [Image.new("RGB", (6, 4), colour) for colour in (RED, GREEN, BLUE)]
    data = encode(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=100)
    assert Image.open(io.BytesIO(data)).n_frames == 3

    loaded = load_image(write(tmp_path, "anim.gif", data))

    assert loaded.size == (6, 4)
    assert colours(loaded.image) == {RED}


def test_animated_webp_gives_its_first_frame() -> None:
    frames = [Image.new("RGB", (6, 4), colour) for colour in (GREEN, RED)]
    data = encode(frames[0], "WEBP", save_all=True, append_images=frames[1:], lossless=True)
    assert colours(load_image(data).image) == {GREEN}


# --- colour modes --------------------------------------------------------------------------


def test_rgba_is_composited_onto_white(tmp_path: Path) -> None:
    image = Image.new("RGBA", (3, 1))
    image.putpixel((0, 0), (255, 0, 0, 0))  # invisible red
    image.putpixel((1, 0), (0, 0, 255, 255))  # opaque blue
    image.putpixel((2, 0), (0, 0, 0, 128))  # half-transparent black
    loaded = load_image(write(tmp_path, "alpha.png", encode(image, "PNG")))
    assert loaded.image.mode == "RGB"
    assert loaded.image.getpixel((0, 0)) == WHITE
    assert loaded.image.getpixel((1, 0)) == BLUE
    assert close_to(loaded.image.getpixel((2, 0)), (127, 127, 127), tolerance=2)


def test_la_is_composited_onto_white(tmp_path: Path) -> None:
    image = Image.new("LA", (2, 1))
    image.putpixel((0, 0), (0, 0))  # invisible black
    image.putpixel((1, 0), (0, 255))  # opaque black
    loaded = load_image(write(tmp_path, "grey-alpha.png", encode(image, "PNG")))
    assert [loaded.image.getpixel((x, 0)) for x in range(2)] == [WHITE, BLACK]


@pytest.mark.parametrize("fmt", ["PNG", "GIF"])
def test_palette_with_transparency_is_composited_onto_white(tmp_path: Path, fmt: str) -> None:
    image = Image.new("P", (2, 1))
    image.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)  # index 0 black, index 1 red
    image.putpixel((0, 0), 0)
    image.putpixel((1, 0), 1)
    data = encode(image, fmt, transparency=0)
    loaded = load_image(write(tmp_path, f"palette.{fmt.lower()}", data))
    assert loaded.image.getpixel((0, 0)) == WHITE  # the transparent black is gone
    assert loaded.image.getpixel((1, 0)) == RED


def test_palette_without_transparency_keeps_its_colours() -> None:
    palette_image = quadrants().convert("P")
    assert load_image(encode(palette_image, "PNG")).image.tobytes() == quadrants().tobytes()


def test_cmyk_jpeg_becomes_rgb(tmp_path: Path) -> None:
    image = Image.new("CMYK", (16, 16), (0, 255, 255, 0))  # pure red ink mix
    data = encode(image, "JPEG", quality=95)
    assert Image.open(io.BytesIO(data)).mode == "CMYK"
    loaded = load_image(write(tmp_path, "print.jpg", data))
    assert loaded.image.mode == "RGB"
    assert close_to(loaded.image.getpixel((8, 8)), RED)


def test_16_bit_grey_png_is_scaled_not_clipped(tmp_path: Path) -> None:
    values = np.array([[0, 32896, 65535]], dtype=np.uint16)  # black, mid grey, white
    data = encode(Image.fromarray(values), "PNG")
    assert Image.open(io.BytesIO(data)).mode.startswith("I")
    loaded = load_image(write(tmp_path, "depth.png", data))
    assert [loaded.image.getpixel((x, 0)) for x in range(3)] == [BLACK, (128,) * 3, WHITE]


def test_16_bit_rgb_png_keeps_its_colours(tmp_path: Path) -> None:
    # PNG colour type 2 at bit depth 16, written by hand: Pillow only writes 8-bit RGB.
    row = b"\x00" + struct.pack(">3H", 65535, 0, 0) + struct.pack(">3H", 0, 0, 65535)
    data = png_bytes(2, 1, bit_depth=16, colour_type=2, raw_rows=row)
    loaded = load_image(write(tmp_path, "deep.png", data))
    assert [loaded.image.getpixel((x, 0)) for x in range(2)] == [RED, BLUE]


def test_one_bit_image_becomes_black_and_white(tmp_path: Path) -> None:
    image = Image.new("1", (2, 1), 0)
    image.putpixel((1, 0), 1)
    loaded = load_image(write(tmp_path, "fax.bmp", encode(image, "BMP")))
    assert [loaded.image.getpixel((x, 0)) for x in range(2)] == [BLACK, WHITE]


@pytest.mark.parametrize(
    ("mode", "values", "expected"),
    [
        ("F", [0.0, 0.5, 1.0], [0, 128, 255]),  # normalised floats
        ("F", [-10.0, 0.0, 10.0], [0, 128, 255]),  # arbitrary range: stretched
        ("I", [0, 100, 255], [0, 100, 255]),  # already 8-bit values
        ("I", [0, 32896, 65535], [0, 128, 255]),  # 16-bit values held in 32-bit ints
        ("I", [-7, -7, -7], [0, 0, 0]),  # a flat image outside 0..255
    ],
)
def test_integer_and_float_grey_are_mapped_to_8_bit(
    mode: str, values: list[float], expected: list[int]
) -> None:
    dtype = np.float32 if mode == "F" else np.int32
    image = Image.fromarray(np.array([values], dtype=dtype))
    assert image.mode == mode
    loaded = load_image(image)
    assert [loaded.image.getpixel((x, 0))[0] for x in range(3)] == expected


def test_grey_tiff_16_bit_is_scaled(tmp_path: Path) -> None:
    image = Image.fromarray(np.array([[0, 65535]], dtype=np.uint16))
    loaded = load_image(write(tmp_path, "scan.tif", encode(image, "TIFF")))
    assert [loaded.image.getpixel((x, 0)) for x in range(2)] == [BLACK, WHITE]


# --- EXIF orientation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("orientation", "expected_size", "red_at", "white_at"),
    [
        (1, (64, 32), (8, 16), (56, 16)),  # as stored: red left half
        (3, (64, 32), (56, 16), (8, 16)),  # rotated 180: red on the right
        (6, (32, 64), (16, 8), (16, 56)),  # rotated 90 clockwise: red on top
        (8, (32, 64), (16, 56), (16, 8)),  # rotated 90 anticlockwise: red at the bottom
    ],
)
def test_exif_orientation_is_applied(
    tmp_path: Path,
    orientation: int,
    expected_size: tuple[int, int],
    red_at: tuple[int, int],
    white_at: tuple[int, int],
) -> None:
    stored = Image.new("RGB", (64, 32), WHITE)
    stored.paste(RED, (0, 0, 32, 32))
    exif = Image.Exif()
    exif[EXIF_ORIENTATION] = orientation
    path = write(tmp_path, "phone.jpg", encode(stored, "JPEG", exif=exif.tobytes(), quality=95))

    loaded = load_image(path)

    assert loaded.size == expected_size
    assert close_to(loaded.image.getpixel(red_at), RED)
    assert close_to(loaded.image.getpixel(white_at), WHITE)


def test_callers_pil_image_is_neither_rotated_nor_aliased() -> None:
    caller_image = Image.new("RGB", (4, 2), RED)
    exif = caller_image.getexif()
    exif[EXIF_ORIENTATION] = 6

    loaded = load_image(caller_image)
    caller_image.paste(BLUE, (0, 0, 4, 2))

    assert loaded.size == (2, 4)
    assert caller_image.size == (4, 2)
    assert colours(loaded.image) == {RED}


def test_callers_rgb_image_is_copied() -> None:
    caller_image = Image.new("RGB", (2, 2), RED)
    loaded = load_image(caller_image)
    caller_image.paste(BLUE, (0, 0, 2, 2))
    assert loaded.image is not caller_image
    assert colours(loaded.image) == {RED}


# --- names ---------------------------------------------------------------------------------


def test_memory_sources_are_named_pasted_image_unless_named() -> None:
    png = encode(quadrants(), "PNG")
    assert load_image(png).name == PASTED_IMAGE_NAME
    assert load_image(bytearray(png)).name == PASTED_IMAGE_NAME
    assert load_image(quadrants()).name == PASTED_IMAGE_NAME
    assert load_image(png, name="clip.png").name == "clip.png"


def test_loaded_image_is_frozen() -> None:
    loaded = load_image(quadrants())
    assert isinstance(loaded, LoadedImage)
    with pytest.raises(AttributeError):
        loaded.name = "other"  # type: ignore[misc]


# --- refused input -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_truncated_files_are_refused_with_the_file_name(tmp_path: Path, fmt: str) -> None:
    data = encode(noise(), fmt)
    path = write(tmp_path, f"cut-short.{fmt.lower()}", data[: len(data) // 2])
    with pytest.raises(ImageError, match=r'"cut-short\.\w+" is damaged or incomplete'):
        load_image(path)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda folder: write(folder, "empty.png", b""), r'"empty.png" is empty \(0 bytes\)'),
        (
            lambda folder: write(folder, "notes.png", b"shopping list: milk, eggs\n" * 4),
            r'"notes.png" is not an image in a supported format',
        ),
        (lambda folder: folder / "gone.png", r'"gone.png" was not found'),
        (lambda folder: folder, r"is a folder, not an image"),
    ],
    ids=["zero-bytes", "text-named-png", "missing", "directory"],
)
def test_unusable_paths_give_a_sentence_naming_the_file(tmp_path: Path, make, message: str) -> None:
    with pytest.raises(ImageError, match=message) as caught:
        load_image(make(tmp_path))
    assert "Traceback" not in str(caught.value)
    assert str(caught.value).endswith(".")


def test_empty_and_garbage_bytes_are_refused() -> None:
    with pytest.raises(ImageError, match="empty"):
        load_image(b"")
    with pytest.raises(ImageError, match=r'"clipboard" is not an image'):
        load_image(b"\x00\x01 definitely not an image", name="clipboard")


# --- decompression-bomb guard --------------------------------------------------------------


def png_bytes(
    width: int, height: int, *, bit_depth: int = 8, colour_type: int = 2, raw_rows: bytes = b""
) -> bytes:
    """A PNG built chunk by chunk, so the header can claim any size."""

    def chunk(kind: bytes, payload: bytes) -> bytes:
        body = kind + payload
        return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, bit_depth, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw_rows or b"\x00"))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def decoding_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to decode pixels fails the test: the guard must act on the header."""

    def refuse_to_decode(self: ImageFile.ImageFile) -> None:
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", refuse_to_decode)


@pytest.mark.timeout(10)
@pytest.mark.usefixtures("decoding_forbidden")
def test_30000_square_png_header_is_refused_before_decoding(tmp_path: Path) -> None:
    path = write(tmp_path, "bomb.png", png_bytes(30000, 30000))
    with pytest.raises(ImageError) as caught:
        load_image(path)
    message = str(caught.value)
    assert message.startswith('"bomb.png" is too large to open safely')
    assert "900.0 megapixels" in message
    assert f"the limit is {MAX_PIXELS // 1_000_000} megapixels" in message


@pytest.mark.usefixtures("decoding_forbidden")
def test_image_just_over_our_limit_is_refused_with_its_dimensions_and_no_warning() -> None:
    # 108 MP lies below Pillow's own hard limit, so only our guard stands in the way.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ImageError) as caught:
            load_image(png_bytes(12000, 9000), name="panorama.png")
    assert "(12000 x 9000 pixels)" in str(caught.value)
    assert "108.0 megapixels" in str(caught.value)


def test_an_image_without_pixels_is_refused() -> None:
    with pytest.raises(ImageError, match=r'"pasted image" has no pixels \(0 x 5\)'):
        load_image(Image.new("RGB", (0, 5)))


def test_in_memory_pil_image_over_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop.core.images.MAX_PIXELS", 50)
    with pytest.raises(ImageError, match=r'"pasted image" is too large .*\(10 x 6 pixels\)'):
        load_image(Image.new("RGB", (10, 6)))
    assert load_image(Image.new("RGB", (10, 5))).size == (10, 5)


# --- collecting files ----------------------------------------------------------------------


def test_collect_image_files_expands_folders_sorted_and_refuses_others(tmp_path: Path) -> None:
    for name in [
        "b.PNG",
        "A.jpg",
        "c.txt",
        "d.pdf",
        ".hidden.png",
        "sub/e.webp",
        "sub/f.docx",
        ".git/g.png",
    ]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"x")
    loose = tmp_path / "c.txt"

    images, refused = collect_image_files([tmp_path, loose])

    assert images == [tmp_path / "A.jpg", tmp_path / "b.PNG", tmp_path / "sub/e.webp"]
    assert refused == [tmp_path / "c.txt", tmp_path / "d.pdf", tmp_path / "sub/f.docx"]


def test_collect_image_files_keeps_pdfs_when_asked(tmp_path: Path) -> None:
    paths = [tmp_path / "scan.PDF", tmp_path / "photo.tiff", tmp_path / "notes.md"]
    images, refused = collect_image_files(paths, accept_pdf=True)
    assert images == paths[:2]
    assert refused == paths[2:]


def test_collect_image_files_survives_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(b"x")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    images, refused = collect_image_files([tmp_path])
    assert images == [tmp_path / "a.png"]
    assert refused == []


def test_image_extensions_are_lower_case_with_a_dot() -> None:
    assert {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif"} <= IMAGE_EXTENSIONS
    assert all(ext.startswith(".") and ext == ext.lower() for ext in IMAGE_EXTENSIONS)


# --- fuzzing -------------------------------------------------------------------------------

SEED_IMAGES = [
    encode(quadrants(), "PNG"),
    encode(noise((16, 16)), "JPEG", quality=80),
    encode(quadrants().convert("P"), "GIF"),
    encode(quadrants(), "WEBP", quality=80),
]


@st.composite
def damaged_image_bytes(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEED_IMAGES)))
    for _ in range(draw(st.integers(0, 4))):
        position = draw(st.integers(0, len(data) - 1))
        data[position] = draw(st.integers(0, 255))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    return bytes(data)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=damaged_image_bytes())
def test_damaged_bytes_give_an_image_or_an_image_error(data: bytes) -> None:
    try:
        loaded = load_image(data, name="fuzz.bin")
    except ImageError as error:
        assert str(error).startswith('"fuzz.bin"')
    else:
        assert loaded.image.mode == "RGB"
        assert len(loaded.digest) == 64
